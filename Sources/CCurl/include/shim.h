// libcurl for courier, behind one table of functions that is filled the
// first time a transfer needs it (dlopen), not at every start: linking
// libcurl brings 37 shared libraries (GnuTLS, Kerberos, LDAP, SSH, RTMP),
// and loading them was most of a round that had nothing to send. Every
// function courier calls is declared here under its own name, and every
// one loads the library if it is not loaded yet; a curl_* function called
// directly would not link, as nothing links libcurl itself.
//
// Swift cannot call C variadic functions either, so every
// curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt use goes
// through one typed, non-variadic function per argument kind. No logic
// lives here beyond the loading.
#ifndef COURIER_CCURL_SHIM_H
#define COURIER_CCURL_SHIM_H

#include <curl/curl.h>

// The library courier loads: the soname of libcurl4 (Debian's package), the
// OpenSSL build whose headers courier is compiled against.
#define COURIER_CURL_LIBRARY "libcurl.so.4"

// Loads libcurl and every function below, once per process; CURLE_OK, or
// CURLE_FAILED_INIT, and then every function fails the same way and
// courier_easy_strerror says why (which file, or which missing function).
CURLcode courier_curl_load(void);

CURLcode courier_global_init(long flags);
const char *courier_easy_strerror(CURLcode code);
const char *courier_multi_strerror(CURLMcode code);

CURL *courier_easy_init(void);
void courier_easy_cleanup(CURL *easy);
void courier_easy_reset(CURL *easy);
CURLcode courier_easy_perform(CURL *easy);
CURLHcode courier_easy_header(
    CURL *easy, const char *name, size_t index, unsigned int origin, int request, struct curl_header **found);

CURLcode courier_easy_setopt_long(CURL *easy, CURLoption option, long value);
CURLcode courier_easy_setopt_offset(CURL *easy, CURLoption option, curl_off_t value);
CURLcode courier_easy_setopt_string(CURL *easy, CURLoption option, const char *value);
CURLcode courier_easy_setopt_pointer(CURL *easy, CURLoption option, void *value);
CURLcode courier_easy_setopt_slist(CURL *easy, CURLoption option, struct curl_slist *value);
CURLcode courier_easy_setopt_write_function(CURL *easy, CURLoption option, curl_write_callback value);
CURLcode courier_easy_setopt_opensocket_function(CURL *easy, CURLoption option, curl_opensocket_callback value);
CURLcode courier_easy_getinfo_long(CURL *easy, CURLINFO info, long *value);
CURLcode courier_easy_getinfo_offset(CURL *easy, CURLINFO info, curl_off_t *value);

struct curl_slist *courier_slist_append(struct curl_slist *list, const char *line);
void courier_slist_free_all(struct curl_slist *list);

CURLM *courier_multi_init(void);
CURLMcode courier_multi_cleanup(CURLM *multi);
CURLMcode courier_multi_setopt_long(CURLM *multi, CURLMoption option, long value);
CURLMcode courier_multi_add_handle(CURLM *multi, CURL *easy);
CURLMcode courier_multi_remove_handle(CURLM *multi, CURL *easy);
CURLMcode courier_multi_perform(CURLM *multi, int *running);
CURLMcode courier_multi_poll(CURLM *multi, struct curl_waitfd extra[], unsigned int count, int timeout, int *ready);
CURLMsg *courier_multi_info_read(CURLM *multi, int *remaining);

CURLU *courier_url(void);
void courier_url_cleanup(CURLU *url);
CURLUcode courier_url_set(CURLU *url, CURLUPart part, const char *content, unsigned int flags);

#endif
