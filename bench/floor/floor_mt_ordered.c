// floor_mt_ordered.c: floor_mt.c (../shared/floor/, MIT) with courier's commit order, and only that
// changed, so that a run beside floor_mt shows what the order costs. floor_mt's settle thread renames
// each answered item into sent/ before its ledger line is written, and its intake thread fsyncs
// sending/ while the settle thread renames out of it. Here, as in courier (docs/design.md §10):
// * settling gathers the answered items (256, or what is left at the end), writes and fsyncs their
//   ledger lines, and only then renames them into sent/; then fsyncs sending/ before sent/ (the
//   folder that lost a name before the one that gained it);
// * one commit at a time: the intake group's (syncfs, ledger, renames, folder fsyncs) and the
//   settle group's hold one mutex, so no folder is fsynced beside renames through it (on btrfs that
//   made one worker's rename durable before the folder it left was synced).
// READS_ON_LOOP=1 moves the reads onto the HTTP thread, as courier has them (below).
// BATCH=N sends up to N claimed items in one POST, in courier's batch wire format (floor.c's
// start_batch), to `courier sink`: a batch floor that keeps courier's guarantees, where floor.c's
// batch mode with ASYNC=1 sends a group before its commit is durable.
// usage: floor_mt_ordered SPOOL URL
#define _GNU_SOURCE
#include <curl/curl.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
typedef struct { char name[64]; char key[64]; char *body; size_t len; long code; char dropped[64]; } Item;
static int noclaim, batch;
static int dq, dsending, dsent, ledger, par = 16, group = 256;
static Item *items; static size_t nitems, next_send; static int intake_eof;
static Item **doneq; static size_t done_tail, done_head; static int http_eof;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
// Held for a whole commit: one at a time, as courier's commit thread runs them.
static pthread_mutex_t commit_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t donecv = PTHREAD_COND_INITIALIZER, roomcv = PTHREAD_COND_INITIALIZER;
static CURLM *m;
static void die(const char *w) { perror(w); exit(1); }
static int json_ok(const char *p, size_t n) { int depth = 0, instr = 0;
  for (size_t i = 0; i < n; i++) { char c = p[i];
    if (instr) { if (c == '\\') i++; else if (c == '"') instr = 0; else if ((unsigned char)c < 0x20) return 0; }
    else if (c == '"') instr = 1; else if (c == '{' || c == '[') depth++; else if (c == '}' || c == ']') { if (--depth < 0) return 0; } }
  return depth == 0 && !instr; }
static size_t line(char *out, const char *key, const char *event, long status) {
  struct timespec ts; clock_gettime(CLOCK_REALTIME, &ts); struct tm tm; gmtime_r(&ts.tv_sec, &tm);
  return sprintf(out, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ\tR\tbench\t%s\t%s\t%ld\t1\t3\t\n", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
    tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000, key, event, status); }
// One intake group: its files read, checked and parsed into items[base, base + got), their ledger
// lines, and the dropped names to rename.
typedef struct { size_t base, got, ll; char lb[1 << 17]; char dropped[256][256]; } Group;
static size_t read_group(DIR *d, Group *g) {
  struct dirent *e; g->got = 0; g->ll = 0;
  while (g->got < (size_t)group && (e = readdir(d))) {
    if (e->d_name[0] == '.' || e->d_type != DT_REG) continue;
    int fd = openat(dq, e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC); if (fd < 0) die("open");
    char *buf = malloc(4096); ssize_t n = read(fd, buf, 4096); if (n <= 0) die("read"); close(fd);
    if (!json_ok(buf, n)) die("json");
    char *id = memmem(buf, n, "\"id\":\"", 6); if (!id) die("id"); id += 6; char *end = memchr(id, '"', buf + n - id);
    Item *it = &items[g->base + g->got];
    snprintf(it->key, sizeof it->key, "%.*s", (int)(end - id), id); snprintf(it->name, sizeof it->name, "%.50s@bench.json", it->key);
    it->body = buf; it->len = n; snprintf(g->dropped[g->got], 256, "%s", e->d_name);
    g->ll += line(g->lb + g->ll, it->key, "accepted", 0); g->got++;
  }
  return g->got; }
static void commit_intake(Group *g) {
  pthread_mutex_lock(&commit_mu);
  if (syncfs(dq)) die("syncfs");
  if (write(ledger, g->lb, g->ll) != (ssize_t)g->ll || fsync(ledger)) die("ledger");
  if (noclaim) { for (size_t i = 0; i < g->got; i++) snprintf(items[g->base + i].dropped, 64, "%s", g->dropped[i]); }
  else {
  for (size_t i = 0; i < g->got; i++) if (renameat(dq, g->dropped[i], dsending, items[g->base + i].name)) die("rename in");
  if (fsync(dq) || fsync(dsending)) die("fsync dirs");
  }
  pthread_mutex_unlock(&commit_mu);
  pthread_mutex_lock(&mu); nitems += g->got; pthread_mutex_unlock(&mu);
  curl_multi_wakeup(m); }
static void *intake(void *arg) { (void)arg;
  DIR *d = fdopendir(dup(dq)); static Group g;
  for (;;) {
    pthread_mutex_lock(&mu); while (nitems - next_send > 1024) pthread_cond_wait(&roomcv, &mu); g.base = nitems; pthread_mutex_unlock(&mu);
    if (!read_group(d, &g)) break;
    commit_intake(&g);
  }
  pthread_mutex_lock(&mu); intake_eof = 1; pthread_mutex_unlock(&mu); curl_multi_wakeup(m);
  return NULL; }
// READS_ON_LOOP=1: courier's shape. The HTTP thread reads each group (between its turns of libcurl)
// and hands it to this thread, which only commits it; up to two groups are out at once, one being
// committed and one read ahead, as courier's loop reads ahead while a commit runs.
static Group handed[2]; static int nhanded, handed_eof, reads_on_loop;
static pthread_cond_t handedcv = PTHREAD_COND_INITIALIZER;
static void *intake_commits(void *arg) { (void)arg;
  for (int next = 0;; next ^= 1) {
    pthread_mutex_lock(&mu); while (nhanded == 0 && !handed_eof) pthread_cond_wait(&handedcv, &mu);
    int done = nhanded == 0; pthread_mutex_unlock(&mu);
    if (done) break;
    commit_intake(&handed[next]);
    pthread_mutex_lock(&mu); nhanded--; pthread_mutex_unlock(&mu);
  }
  pthread_mutex_lock(&mu); intake_eof = 1; pthread_mutex_unlock(&mu); curl_multi_wakeup(m);
  return NULL; }
static void commit_settled(Item **group_items, size_t count, char *lb, size_t ll) {
  pthread_mutex_lock(&commit_mu);
  if (write(ledger, lb, ll) != (ssize_t)ll || fsync(ledger)) die("ledger");
  for (size_t i = 0; i < count; i++) {
    Item *it = group_items[i];
    if (noclaim ? renameat(dq, it->dropped, dsent, it->name) : renameat(dsending, it->name, dsent, it->name)) die("rename out");
    free(it->body);
  }
  if (fsync(noclaim ? dq : dsending) || fsync(dsent)) die("fsync dirs");
  pthread_mutex_unlock(&commit_mu); }
static void *settler(void *arg) { (void)arg; static char lb[1 << 18]; static Item *gathered[4096]; size_t ll = 0, since = 0;
  for (;;) {
    pthread_mutex_lock(&mu);
    while (done_head == done_tail && !http_eof) pthread_cond_wait(&donecv, &mu);
    if (done_head == done_tail && http_eof) { pthread_mutex_unlock(&mu); break; }
    Item *it = doneq[done_head++]; pthread_mutex_unlock(&mu);
    ll += line(lb + ll, it->key, "sent", it->code); gathered[since] = it;
    if (++since >= (size_t)group) { commit_settled(gathered, since, lb, ll); ll = 0; since = 0; }
  }
  if (since) commit_settled(gathered, since, lb, ll);
  return NULL; }
static size_t discard(char *p, size_t s, size_t n, void *u) { (void)p; (void)u; return s * n; }
typedef struct { CURL *h; struct curl_slist *hdr; Item *it; size_t nb; char *bbuf; } Slot;
static void start_batch(Slot *s, Item *it, size_t nb, const char *url) {
  s->it = it; s->nb = nb; if (!s->bbuf) s->bbuf = malloc(1 << 20);
  size_t o = 0; char *b = s->bbuf; o += sprintf(b + o, "{\"items\":[");
  for (size_t i = 0; i < nb; i++) {
    o += sprintf(b + o, "%s{\"idempotency_key\":\"%s\",\"op\":\"CREATE\",\"entity\":\"sleep\",\"client_id\":\"%s\",\"payload\":",
                 i ? "," : "", it[i].key, it[i].key);
    memcpy(b + o, it[i].body, it[i].len); o += it[i].len; b[o++] = '}'; }
  o += sprintf(b + o, "],\"device\":{\"id\":\"bench\",\"app_version\":\"0.1.0\"}}");
  if (s->hdr) curl_slist_free_all(s->hdr);
  struct curl_slist *h = NULL;
  h = curl_slist_append(h, "Content-Type: application/json"); h = curl_slist_append(h, "User-Agent: courier/0.1.0");
  h = curl_slist_append(h, "Courier-Device: bench"); h = curl_slist_append(h, "Expect:"); s->hdr = h;
  curl_easy_setopt(s->h, CURLOPT_URL, url); curl_easy_setopt(s->h, CURLOPT_HTTPHEADER, h);
  curl_easy_setopt(s->h, CURLOPT_POSTFIELDS, s->bbuf); curl_easy_setopt(s->h, CURLOPT_POSTFIELDSIZE, (long)o);
  curl_easy_setopt(s->h, CURLOPT_WRITEFUNCTION, discard); curl_easy_setopt(s->h, CURLOPT_PRIVATE, s);
  curl_easy_setopt(s->h, CURLOPT_NOSIGNAL, 1L);
  curl_multi_add_handle(m, s->h); }
static void start(Slot *s, Item *it, const char *url) {
  s->it = it; s->nb = 1; if (s->hdr) curl_slist_free_all(s->hdr);
  char k[100]; snprintf(k, sizeof k, "Idempotency-Key: %s", it->key); struct curl_slist *h = NULL;
  h = curl_slist_append(h, "Content-Type: application/json"); h = curl_slist_append(h, k);
  h = curl_slist_append(h, "User-Agent: courier/0.1.0"); h = curl_slist_append(h, "Courier-Device: bench");
  h = curl_slist_append(h, "Courier-Session: bench"); h = curl_slist_append(h, "Expect:"); s->hdr = h;
  curl_easy_setopt(s->h, CURLOPT_URL, url); curl_easy_setopt(s->h, CURLOPT_HTTPHEADER, h);
  curl_easy_setopt(s->h, CURLOPT_POSTFIELDS, it->body); curl_easy_setopt(s->h, CURLOPT_POSTFIELDSIZE, (long)it->len);
  curl_easy_setopt(s->h, CURLOPT_WRITEFUNCTION, discard); curl_easy_setopt(s->h, CURLOPT_PRIVATE, s);
  curl_easy_setopt(s->h, CURLOPT_NOSIGNAL, 1L);
  curl_multi_add_handle(m, s->h); }
int main(int argc, char **argv) {
  if (argc < 3) return 2; const char *url = argv[2];
  if (getenv("PAR")) par = atoi(getenv("PAR"));
  noclaim = getenv("NOCLAIM") && atoi(getenv("NOCLAIM"));
  reads_on_loop = getenv("READS_ON_LOOP") && atoi(getenv("READS_ON_LOOP"));
  if (getenv("BATCH")) batch = atoi(getenv("BATCH"));
  struct timespec t0, t1; clock_gettime(CLOCK_MONOTONIC, &t0);
  int root = open(argv[1], O_RDONLY | O_DIRECTORY); if (root < 0) die("spool");
  mkdirat(root, "sending", 0755); mkdirat(root, "sent", 0755); mkdirat(root, "ledger", 0755);
  dq = openat(root, "queued", O_RDONLY | O_DIRECTORY); dsending = openat(root, "sending", O_RDONLY | O_DIRECTORY);
  dsent = openat(root, "sent", O_RDONLY | O_DIRECTORY); int dl = openat(root, "ledger", O_RDONLY | O_DIRECTORY);
  ledger = openat(dl, "today.tsv", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  items = calloc(2000000, sizeof(Item)); doneq = calloc(2000000, sizeof(Item *));
  curl_global_init(CURL_GLOBAL_DEFAULT); m = curl_multi_init();
  curl_multi_setopt(m, CURLMOPT_MAX_HOST_CONNECTIONS, (long)par);
  pthread_t ti, ts; pthread_create(&ti, NULL, reads_on_loop ? intake_commits : intake, NULL); pthread_create(&ts, NULL, settler, NULL);
  Slot *slots = calloc(par, sizeof(Slot)); Slot **idle = calloc(par, sizeof(Slot *)); int nidle = 0;
  for (int i = 0; i < par; i++) { slots[i].h = curl_easy_init(); idle[nidle++] = &slots[i]; }
  size_t completed = 0;
  DIR *loopdir = reads_on_loop ? fdopendir(dup(dq)) : NULL; size_t read_to = 0; int write_next = 0, read_eof = 0;
  for (;;) {
    if (reads_on_loop && !read_eof) {
      pthread_mutex_lock(&mu); int room = nhanded < 2 && read_to - next_send <= 1024; pthread_mutex_unlock(&mu);
      if (room) {
        Group *g = &handed[write_next]; g->base = read_to;
        if (read_group(loopdir, g)) { read_to += g->got; write_next ^= 1; pthread_mutex_lock(&mu); nhanded++; }
        else { read_eof = 1; pthread_mutex_lock(&mu); handed_eof = 1; }
        pthread_cond_signal(&handedcv); pthread_mutex_unlock(&mu);
      }
    }
    pthread_mutex_lock(&mu); size_t avail = nitems; int eof = intake_eof; pthread_mutex_unlock(&mu);
    int started = 0;
    while (nidle > 0 && next_send < avail) {
      size_t nb = batch ? avail - next_send : 1; if (batch && nb > (size_t)batch) nb = batch;
      if (batch) start_batch(idle[--nidle], &items[next_send], nb, url); else start(idle[--nidle], &items[next_send], url);
      next_send += nb; started = 1; }
    if (started) { pthread_mutex_lock(&mu); pthread_cond_signal(&roomcv); pthread_mutex_unlock(&mu); }
    if (eof && next_send == avail && nidle == par) break;
    int running; curl_multi_perform(m, &running);
    CURLMsg *msg; int left; int any = 0;
    while ((msg = curl_multi_info_read(m, &left))) {
      if (msg->msg != CURLMSG_DONE) continue;
      Slot *s; curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&s);
      long code = 0; curl_easy_getinfo(msg->easy_handle, CURLINFO_RESPONSE_CODE, &code);
      if (msg->data.result != CURLE_OK || code / 100 != 2) { fprintf(stderr, "fail %d %ld\n", msg->data.result, code); exit(1); }
      curl_multi_remove_handle(m, s->h);
      pthread_mutex_lock(&mu); for (size_t i = 0; i < s->nb; i++) { s->it[i].code = code; doneq[done_tail++] = &s->it[i]; }
      pthread_mutex_unlock(&mu); any = 1;
      idle[nidle++] = s; completed += s->nb;
    }
    if (any) { pthread_mutex_lock(&mu); pthread_cond_signal(&donecv); pthread_mutex_unlock(&mu); }
    if (!any) curl_multi_poll(m, NULL, 0, 100, NULL);
  }
  pthread_mutex_lock(&mu); http_eof = 1; pthread_cond_signal(&donecv); pthread_mutex_unlock(&mu);
  pthread_join(ti, NULL); pthread_join(ts, NULL);
  clock_gettime(CLOCK_MONOTONIC, &t1); struct rusage ru; getrusage(RUSAGE_SELF, &ru);
  double wall = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
  double u = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6, s = ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
  fprintf(stderr, "floor_mt_ordered: %zu records %.3f s wall, %.0f rec/s, %.1f us CPU/rec (%.1f user, %.1f sys)\n", completed, wall, completed / wall,
          (u + s) * 1e6 / completed, u * 1e6 / completed, s * 1e6 / completed);
  return 0; }
