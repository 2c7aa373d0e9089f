// The table behind shim.h: libcurl's functions, looked up with dlsym the
// first time one is needed. It is written once, under pthread_once, and
// only read after that.
#include "shim.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

// Every libcurl function courier calls (curl_ and this name).
#define COURIER_CURL_FUNCTIONS(X) \
    X(global_init)                \
    X(easy_strerror)              \
    X(multi_strerror)             \
    X(easy_init)                  \
    X(easy_cleanup)               \
    X(easy_reset)                 \
    X(easy_perform)               \
    X(easy_header)                \
    X(easy_setopt)                \
    X(easy_getinfo)               \
    X(slist_append)               \
    X(slist_free_all)             \
    X(multi_init)                 \
    X(multi_cleanup)              \
    X(multi_setopt)               \
    X(multi_add_handle)           \
    X(multi_remove_handle)        \
    X(multi_perform)              \
    X(multi_poll)                 \
    X(multi_info_read)            \
    X(url)                        \
    X(url_cleanup)                \
    X(url_set)

// The members are named without curl_: curl.h makes curl_easy_setopt and
// curl_easy_getinfo type-checking macros, which a call through a member of
// that name would expand.
static struct {
#define COURIER_MEMBER(name) __typeof__(curl_##name) *name;
    COURIER_CURL_FUNCTIONS(COURIER_MEMBER)
#undef COURIER_MEMBER
} curl;

static pthread_once_t loading = PTHREAD_ONCE_INIT;
static int loaded;
static char failure[512];

static void load(void) {
    // RTLD_NOW: a library that lacks a symbol fails here, once, not in the
    // middle of a transfer. RTLD_LOCAL: its symbols stay out of the way of
    // the rest of the process.
    void *library = dlopen(COURIER_CURL_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        snprintf(failure, sizeof failure, "unable to load libcurl: %s", dlerror());
        return;
    }
#define COURIER_LOOKUP(name)                                                                      \
    curl.name = (__typeof__(curl.name))dlsym(library, "curl_" #name);                             \
    if (curl.name == NULL) {                                                                      \
        snprintf(failure, sizeof failure, "unable to load libcurl: %s has no curl_" #name,       \
                 COURIER_CURL_LIBRARY);                                                           \
        return;                                                                                   \
    }
    COURIER_CURL_FUNCTIONS(COURIER_LOOKUP)
#undef COURIER_LOOKUP
    loaded = 1;
}

CURLcode courier_curl_load(void) {
    pthread_once(&loading, load);
    return loaded ? CURLE_OK : CURLE_FAILED_INIT;
}

CURLcode courier_global_init(long flags) {
    return courier_curl_load() == CURLE_OK ? curl.global_init(flags) : CURLE_FAILED_INIT;
}

const char *courier_easy_strerror(CURLcode code) {
    return courier_curl_load() == CURLE_OK ? curl.easy_strerror(code) : failure;
}

const char *courier_multi_strerror(CURLMcode code) {
    return courier_curl_load() == CURLE_OK ? curl.multi_strerror(code) : failure;
}

CURL *courier_easy_init(void) { return courier_curl_load() == CURLE_OK ? curl.easy_init() : NULL; }

void courier_easy_cleanup(CURL *easy) {
    if (courier_curl_load() == CURLE_OK) curl.easy_cleanup(easy);
}

void courier_easy_reset(CURL *easy) {
    if (courier_curl_load() == CURLE_OK) curl.easy_reset(easy);
}

CURLcode courier_easy_perform(CURL *easy) {
    return courier_curl_load() == CURLE_OK ? curl.easy_perform(easy) : CURLE_FAILED_INIT;
}

CURLHcode courier_easy_header(
    CURL *easy, const char *name, size_t index, unsigned int origin, int request, struct curl_header **found) {
    return courier_curl_load() == CURLE_OK ? curl.easy_header(easy, name, index, origin, request, found)
                                           : CURLHE_NOT_BUILT_IN;
}

#define COURIER_SETOPT(suffix, type)                                                              \
    CURLcode courier_easy_setopt_##suffix(CURL *easy, CURLoption option, type value) {            \
        return courier_curl_load() == CURLE_OK ? curl.easy_setopt(easy, option, value)            \
                                               : CURLE_FAILED_INIT;                               \
    }
COURIER_SETOPT(long, long)
COURIER_SETOPT(offset, curl_off_t)
COURIER_SETOPT(string, const char *)
COURIER_SETOPT(pointer, void *)
COURIER_SETOPT(slist, struct curl_slist *)
COURIER_SETOPT(write_function, curl_write_callback)
COURIER_SETOPT(opensocket_function, curl_opensocket_callback)
#undef COURIER_SETOPT

CURLcode courier_easy_getinfo_long(CURL *easy, CURLINFO info, long *value) {
    return courier_curl_load() == CURLE_OK ? curl.easy_getinfo(easy, info, value) : CURLE_FAILED_INIT;
}

CURLcode courier_easy_getinfo_offset(CURL *easy, CURLINFO info, curl_off_t *value) {
    return courier_curl_load() == CURLE_OK ? curl.easy_getinfo(easy, info, value) : CURLE_FAILED_INIT;
}

struct curl_slist *courier_slist_append(struct curl_slist *list, const char *line) {
    return courier_curl_load() == CURLE_OK ? curl.slist_append(list, line) : NULL;
}

void courier_slist_free_all(struct curl_slist *list) {
    if (courier_curl_load() == CURLE_OK) curl.slist_free_all(list);
}

CURLM *courier_multi_init(void) { return courier_curl_load() == CURLE_OK ? curl.multi_init() : NULL; }

CURLMcode courier_multi_cleanup(CURLM *multi) {
    return courier_curl_load() == CURLE_OK ? curl.multi_cleanup(multi) : CURLM_INTERNAL_ERROR;
}

CURLMcode courier_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return courier_curl_load() == CURLE_OK ? curl.multi_setopt(multi, option, value) : CURLM_INTERNAL_ERROR;
}

CURLMcode courier_multi_add_handle(CURLM *multi, CURL *easy) {
    return courier_curl_load() == CURLE_OK ? curl.multi_add_handle(multi, easy) : CURLM_INTERNAL_ERROR;
}

CURLMcode courier_multi_remove_handle(CURLM *multi, CURL *easy) {
    return courier_curl_load() == CURLE_OK ? curl.multi_remove_handle(multi, easy) : CURLM_INTERNAL_ERROR;
}

CURLMcode courier_multi_perform(CURLM *multi, int *running) {
    return courier_curl_load() == CURLE_OK ? curl.multi_perform(multi, running) : CURLM_INTERNAL_ERROR;
}

CURLMcode courier_multi_poll(CURLM *multi, struct curl_waitfd extra[], unsigned int count, int timeout, int *ready) {
    return courier_curl_load() == CURLE_OK ? curl.multi_poll(multi, extra, count, timeout, ready)
                                           : CURLM_INTERNAL_ERROR;
}

CURLMsg *courier_multi_info_read(CURLM *multi, int *remaining) {
    return courier_curl_load() == CURLE_OK ? curl.multi_info_read(multi, remaining) : NULL;
}

CURLU *courier_url(void) { return courier_curl_load() == CURLE_OK ? curl.url() : NULL; }

void courier_url_cleanup(CURLU *url) {
    if (courier_curl_load() == CURLE_OK) curl.url_cleanup(url);
}

CURLUcode courier_url_set(CURLU *url, CURLUPart part, const char *content, unsigned int flags) {
    return courier_curl_load() == CURLE_OK ? curl.url_set(url, part, content, flags) : CURLUE_BAD_HANDLE;
}
