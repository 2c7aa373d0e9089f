# make install [PREFIX=/usr/local] [DESTDIR=] [BINARY=.build/release/courier] [SPOOL=/var/spool/courier]
#
# Installs the binary, the systemd units, the example configuration (never
# over an existing one), the man pages and the shell completions. SPOOL is
# the spool's path: in the units (ReadWritePaths=, the path unit's watch,
# RequiresMountsFor=) and in a newly written courier.conf.

PREFIX ?= /usr/local
DESTDIR ?=
SYSCONFDIR ?= /etc
BINDIR = $(PREFIX)/bin
UNITDIR ?= $(PREFIX)/lib/systemd/system
MANDIR = $(PREFIX)/share/man
BASHCOMPDIR = $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR = $(PREFIX)/share/zsh/vendor-completions
FISHCOMPDIR = $(PREFIX)/share/fish/vendor_completions.d
# The Prometheus alert rules (etc/prometheus/courier-alerts.yml), for rule_files:.
DATADIR = $(PREFIX)/share/courier
BINARY ?= .build/release/courier
SPOOL ?= /var/spool/courier

UNITS = courier.service courier.timer courier.path courier-prune.service courier-prune.timer \
	courier-catalog.service courier-catalog.timer courier-sync-request.path courier-sync-request.service \
	courier-shared.timer courier@.service courier@.timer

.PHONY: all install uninstall deb completions

all: $(BINARY)

# The release build is redone whenever a source or the manifest is newer
# than it; a BINARY given from outside is used as it is.
SOURCES := Package.swift $(shell find Sources -name '*.swift' -o -name '*.h' -o -name '*.modulemap')

ifeq ($(BINARY),.build/release/courier)
$(BINARY): $(SOURCES)
	swift build -c release --static-swift-stdlib
endif

install: $(BINARY)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSCONFDIR)/courier \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) \
		$(DESTDIR)$(FISHCOMPDIR) $(DESTDIR)$(DATADIR)
	install -m 0755 $(BINARY) $(DESTDIR)$(BINDIR)/courier
	for unit in $(UNITS); do \
		sed -e 's|/usr/bin/courier|$(BINDIR)/courier|g' \
		    -e 's|/etc/courier/courier.conf|$(SYSCONFDIR)/courier/courier.conf|g' \
		    -e 's|/var/spool/courier|$(SPOOL)|g' \
		    etc/systemd/$$unit > $(DESTDIR)$(UNITDIR)/$$unit; \
		chmod 0644 $(DESTDIR)$(UNITDIR)/$$unit; \
	done
	# The example's spool is the repository's; an installed one uses $(SPOOL).
	if [ ! -e $(DESTDIR)$(SYSCONFDIR)/courier/courier.conf ]; then \
		sed -e 's|^spool = ../spool.*|spool = $(SPOOL)|' etc/courier.conf \
		    > $(DESTDIR)$(SYSCONFDIR)/courier/courier.conf; \
		chmod 0640 $(DESTDIR)$(SYSCONFDIR)/courier/courier.conf; \
	else \
		echo "keeping the existing $(DESTDIR)$(SYSCONFDIR)/courier/courier.conf"; \
	fi
	install -m 0644 man/courier.1 $(DESTDIR)$(MANDIR)/man1/courier.1
	install -m 0644 man/courier.conf.5 $(DESTDIR)$(MANDIR)/man5/courier.conf.5
	install -m 0644 etc/completion/courier.bash $(DESTDIR)$(BASHCOMPDIR)/courier
	install -m 0644 etc/completion/_courier $(DESTDIR)$(ZSHCOMPDIR)/_courier
	install -m 0644 etc/completion/courier.fish $(DESTDIR)$(FISHCOMPDIR)/courier.fish
	install -m 0644 etc/prometheus/courier-alerts.yml $(DESTDIR)$(DATADIR)/courier-alerts.yml

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/courier $(DESTDIR)$(MANDIR)/man1/courier.1 $(DESTDIR)$(MANDIR)/man5/courier.conf.5 \
		$(DESTDIR)$(BASHCOMPDIR)/courier $(DESTDIR)$(ZSHCOMPDIR)/_courier $(DESTDIR)$(FISHCOMPDIR)/courier.fish \
		$(DESTDIR)$(DATADIR)/courier-alerts.yml
	for unit in $(UNITS); do rm -f $(DESTDIR)$(UNITDIR)/$$unit; done

deb:
	scripts/build-deb.sh

# The shell completions are written from the command table
# (Sources/CourierCLI/CommandTable.swift) and checked in; a test fails when
# they differ from what the binary prints. After changing a command:
#   make completions BINARY=.build/debug/courier
completions: $(BINARY)
	$(BINARY) completions bash > etc/completion/courier.bash
	$(BINARY) completions zsh > etc/completion/_courier
	$(BINARY) completions fish > etc/completion/courier.fish
