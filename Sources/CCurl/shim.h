#ifndef STATEBUS_CCURL_SHIM_H
#define STATEBUS_CCURL_SHIM_H

#include <curl/curl.h>

/* curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: one typed
   wrapper per kind of argument the etcd client passes. */

static inline CURLcode ccurl_set_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_set_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_set_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_set_write_function(CURL *handle, curl_write_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback);
}

static inline CURLcode ccurl_response_code(CURL *handle, long *code) {
    return curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, code);
}

/* Sets libcurl up once per process: CURL_GLOBAL_DEFAULT is a macro expression Swift does
   not import. */
static inline CURLcode ccurl_global_init(void) {
    return curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* Lets a handle speak HTTP and HTTPS only: CURLOPT_PROTOCOLS_STR from libcurl 7.85, the
   bit mask before it (Ubuntu 22.04 has 7.81). */
static inline CURLcode ccurl_allow_http_only(CURL *handle) {
#if LIBCURL_VERSION_NUM >= 0x075500
    return curl_easy_setopt(handle, CURLOPT_PROTOCOLS_STR, "http,https");
#else
    return curl_easy_setopt(handle, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
}

/* A transfer that ends while its host name is still being looked up leaves the lookup's
   thread to finish on its own, instead of waiting for it (libcurl 7.87 and later): the
   client's one transfers' thread must not stall on a slow resolver. */
static inline CURLcode ccurl_abandon_slow_lookups(CURL *handle) {
#if LIBCURL_VERSION_NUM >= 0x075700
    return curl_easy_setopt(handle, CURLOPT_QUICK_EXIT, 1L);
#else
    (void)handle;
    return CURLE_OK;
#endif
}

/* How many new connections a transfer made: 0 when it ran on a reused one. */
static inline CURLcode ccurl_new_connections(CURL *handle, long *count) {
    return curl_easy_getinfo(handle, CURLINFO_NUM_CONNECTS, count);
}

/* The result of a finished transfer, from the union in CURLMsg. */
static inline CURLcode ccurl_message_result(const CURLMsg *message) {
    return message->data.result;
}

#endif
