#!/usr/bin/env bash
# Builds dist/courier_VERSION_ARCH.deb with dpkg-deb, from a release build it
# always makes itself: the Swift runtime linked in statically, so the package
# needs no Swift toolchain.
#   OUTDIR=dir    where the .deb goes (default: dist)
set -euo pipefail
cd "$(dirname "$0")/.."

OUTDIR=${OUTDIR:-dist}
# A build directory of its own: .build/release is the quick start's dynamic
# build, and switching one directory between static and dynamic linking
# rebuilds everything each time. --disable-local-rpath: no RUNPATH $ORIGIN
# (SwiftPM's way to find libraries beside an executable; the package ships
# none beside /usr/bin/courier).
SCRATCH=.build-deb
swift build -c release --static-swift-stdlib --disable-local-rpath --scratch-path "$SCRATCH" >&2
BINARY=$SCRATCH/release/courier
# What it needs at run time is Debian's (libc, libcurl, libinih, libssl, zlib)
# and nothing of the toolchain's.
if readelf -d "$BINARY" | grep -E 'NEEDED.*\[(libswift|libFoundation|libdispatch|libBlocksRuntime)|R(UN)?PATH' >&2; then
    echo "build-deb: $BINARY needs the Swift toolchain's libraries or carries a RUNPATH (above): not packaged" >&2
    exit 70
fi
# The binary says what it is: `courier 0.1.0`.
VERSION=$("$BINARY" --version | sed -n 's/^courier //p')
[ -n "$VERSION" ] || { echo "build-deb: $BINARY --version said nothing usable" >&2; exit 70; }
ARCH=$(dpkg --print-architecture)
root=$(mktemp -d)
chmod 0755 "$root"
trap 'rm -rf "$root"' EXIT

make --no-print-directory install DESTDIR="$root" PREFIX=/usr UNITDIR=/lib/systemd/system BINARY="$BINARY" >/dev/null
strip --strip-unneeded "$root/usr/bin/courier" 2>/dev/null || true
gzip -9n "$root/usr/share/man/man1/courier.1" "$root/usr/share/man/man5/courier.conf.5"
install -d "$root/usr/share/doc/courier"
install -m 0644 README.md "$root/usr/share/doc/courier/README.md"
# The README links into docs/: the reference it moved there comes along.
install -d "$root/usr/share/doc/courier/docs"
install -m 0644 docs/*.md "$root/usr/share/doc/courier/docs/"

install -d "$root/DEBIAN"
cat > "$root/DEBIAN/control" <<CONTROL
Package: courier
Version: $VERSION
Section: net
Priority: optional
Architecture: $ARCH
Maintainer: Courier developers <courier@localhost>
Depends: libc6, libcurl4, libinih1, libssl3, zlib1g, libstdc++6, libgcc-s1, adduser
Installed-Size: $(du -sk "$root" | cut -f1)
Description: spool-based delivery of JSON records to HTTP subscribers
 Scripts drop JSON records into /var/spool/courier/queued; courier delivers
 each one to HTTP endpoints with an Idempotency-Key, through a state machine
 of directories moved by rename(2), with a daily TSV ledger of every attempt.
 Run by systemd timers and a path unit; operated with ls, mv and awk.
CONTROL
echo /etc/courier/courier.conf > "$root/DEBIAN/conffiles"

cat > "$root/DEBIAN/postinst" <<'POSTINST'
#!/bin/sh
set -e
if [ "$1" = configure ]; then
    getent group courier >/dev/null || addgroup --system --quiet courier
    getent passwd courier >/dev/null || adduser --system --quiet --ingroup courier \
        --home /var/spool/courier --no-create-home --shell /usr/sbin/nologin courier
    # Producers: users who may drop records (adduser alice courier-producers).
    # courier is one of them, to read what they drop.
    getent group courier-producers >/dev/null || addgroup --system --quiet courier-producers
    adduser --quiet courier courier-producers >/dev/null
    install -d -o courier -g courier -m 0750 /var/spool/courier
    /usr/bin/courier --spool /var/spool/courier init >/dev/null
    # The spool's folders and .courier/'s (held/, made by init), not their
    # contents: files scripts dropped keep their owners.
    find /var/spool/courier /var/spool/courier/.courier -maxdepth 1 -type d -exec chown courier:courier {} +
    chmod 0750 /var/spool/courier
    # tmp/ and queued/ courier:courier-producers 3770, the spool 0751.
    /usr/bin/courier --spool /var/spool/courier init --group courier-producers >/dev/null
    # courier and the producers read it (enqueue checks records against it);
    # only root writes it.
    chown root:courier-producers /etc/courier/courier.conf
    chmod 0640 /etc/courier/courier.conf
    if [ -d /run/systemd/system ]; then systemctl daemon-reload >/dev/null || true; fi
fi
exit 0
POSTINST

cat > "$root/DEBIAN/prerm" <<'PRERM'
#!/bin/sh
set -e
if [ -d /run/systemd/system ]; then
    # Every unit the package ships that can start a round or a sync, and
    # every instance of the template timer.
    systemctl stop courier.timer courier.path courier-prune.timer courier-catalog.timer courier-sync-request.path \
        courier-shared.timer 'courier@*.timer' >/dev/null 2>&1 || true
fi
exit 0
PRERM

cat > "$root/DEBIAN/postrm" <<'POSTRM'
#!/bin/sh
set -e
# The spool holds people's records and the ledger: it is never removed here.
if [ -d /run/systemd/system ]; then systemctl daemon-reload >/dev/null || true; fi
exit 0
POSTRM
chmod 0755 "$root/DEBIAN/postinst" "$root/DEBIAN/prerm" "$root/DEBIAN/postrm"

mkdir -p "$OUTDIR"
dpkg-deb --root-owner-group -Zxz --build "$root" "$OUTDIR/courier_${VERSION}_${ARCH}.deb" >/dev/null
echo "$OUTDIR/courier_${VERSION}_${ARCH}.deb"
