/*
 * Every libcurl and libssh2 function sp calls, written once
 * (executor/netlib.h says why they are bound at run time).  netlib.c
 * turns each list into its table of pointers, its dlsym names and its
 * forwarding functions; tests/netlib/fake_libssh2.c turns the libssh2
 * list into a stand-in library that lacks one of them.  A call to a
 * function missing here fails to link sp, so the list cannot fall
 * behind the code.
 *
 * F(ret, name, params, args): a function returning a value.
 * V(name, params, args): a function returning nothing.
 * The variadic setopt/getinfo functions are forwarded by hand in
 * netlib.c and listed in NETLIB_CURL_VARIADIC.
 */
#ifndef SP_EXECUTOR_NETLIB_LIST_H
#define SP_EXECUTOR_NETLIB_LIST_H

#define NETLIB_SSH2_FUNCTIONS(F, V) \
	F(int, libssh2_init, (int flags), (flags)) \
	V(libssh2_exit, (void), ()) \
	V(libssh2_free, (LIBSSH2_SESSION *s, void *p), (s, p)) \
	F(LIBSSH2_SESSION *, libssh2_session_init_ex, \
	    (LIBSSH2_ALLOC_FUNC((*a)), LIBSSH2_FREE_FUNC((*f)), \
	    LIBSSH2_REALLOC_FUNC((*r)), void *abstract), (a, f, r, abstract)) \
	F(int, libssh2_session_free, (LIBSSH2_SESSION *s), (s)) \
	V(libssh2_session_set_blocking, (LIBSSH2_SESSION *s, int b), (s, b)) \
	F(int, libssh2_session_block_directions, (LIBSSH2_SESSION *s), (s)) \
	F(int, libssh2_session_handshake, (LIBSSH2_SESSION *s, \
	    libssh2_socket_t fd), (s, fd)) \
	F(const char *, libssh2_session_hostkey, (LIBSSH2_SESSION *s, \
	    size_t *len, int *type), (s, len, type)) \
	F(int, libssh2_session_supported_algs, (LIBSSH2_SESSION *s, \
	    int method, const char ***algs), (s, method, algs)) \
	F(int, libssh2_session_method_pref, (LIBSSH2_SESSION *s, int method, \
	    const char *prefs), (s, method, prefs)) \
	F(int, libssh2_session_disconnect_ex, (LIBSSH2_SESSION *s, \
	    int reason, const char *desc, const char *lang), \
	    (s, reason, desc, lang)) \
	F(int, libssh2_session_last_errno, (LIBSSH2_SESSION *s), (s)) \
	F(int, libssh2_session_last_error, (LIBSSH2_SESSION *s, char **msg, \
	    int *len, int want_buf), (s, msg, len, want_buf)) \
	V(libssh2_keepalive_config, (LIBSSH2_SESSION *s, int want_reply, \
	    unsigned interval), (s, want_reply, interval)) \
	F(int, libssh2_keepalive_send, (LIBSSH2_SESSION *s, int *next), \
	    (s, next)) \
	F(LIBSSH2_KNOWNHOSTS *, libssh2_knownhost_init, (LIBSSH2_SESSION *s), \
	    (s)) \
	V(libssh2_knownhost_free, (LIBSSH2_KNOWNHOSTS *h), (h)) \
	F(int, libssh2_knownhost_readline, (LIBSSH2_KNOWNHOSTS *h, \
	    const char *line, size_t len, int type), (h, line, len, type)) \
	F(int, libssh2_knownhost_checkp, (LIBSSH2_KNOWNHOSTS *h, \
	    const char *host, int port, const char *key, size_t keylen, \
	    int typemask, struct libssh2_knownhost **found), \
	    (h, host, port, key, keylen, typemask, found)) \
	F(int, libssh2_userauth_publickey_frommemory, (LIBSSH2_SESSION *s, \
	    const char *user, size_t user_len, const char *pub, \
	    size_t pub_len, const char *priv, size_t priv_len, \
	    const char *passphrase), \
	    (s, user, user_len, pub, pub_len, priv, priv_len, passphrase)) \
	F(LIBSSH2_CHANNEL *, libssh2_channel_open_ex, (LIBSSH2_SESSION *s, \
	    const char *type, unsigned int type_len, unsigned int window, \
	    unsigned int packet, const char *msg, unsigned int msg_len), \
	    (s, type, type_len, window, packet, msg, msg_len)) \
	F(int, libssh2_channel_process_startup, (LIBSSH2_CHANNEL *c, \
	    const char *req, unsigned int req_len, const char *msg, \
	    unsigned int msg_len), (c, req, req_len, msg, msg_len)) \
	F(ssize_t, libssh2_channel_read_ex, (LIBSSH2_CHANNEL *c, int stream, \
	    char *buf, size_t len), (c, stream, buf, len)) \
	F(ssize_t, libssh2_channel_write_ex, (LIBSSH2_CHANNEL *c, int stream, \
	    const char *buf, size_t len), (c, stream, buf, len)) \
	F(int, libssh2_channel_send_eof, (LIBSSH2_CHANNEL *c), (c)) \
	F(int, libssh2_channel_eof, (LIBSSH2_CHANNEL *c), (c)) \
	F(int, libssh2_channel_close, (LIBSSH2_CHANNEL *c), (c)) \
	F(int, libssh2_channel_wait_closed, (LIBSSH2_CHANNEL *c), (c)) \
	F(int, libssh2_channel_get_exit_status, (LIBSSH2_CHANNEL *c), (c)) \
	F(int, libssh2_channel_get_exit_signal, (LIBSSH2_CHANNEL *c, \
	    char **sig, size_t *sig_len, char **msg, size_t *msg_len, \
	    char **lang, size_t *lang_len), \
	    (c, sig, sig_len, msg, msg_len, lang, lang_len)) \
	F(int, libssh2_channel_free, (LIBSSH2_CHANNEL *c), (c))

#define NETLIB_CURL_FUNCTIONS(F, V) \
	F(CURLcode, curl_global_init, (long flags), (flags)) \
	V(curl_global_cleanup, (void), ()) \
	F(const char *, curl_easy_strerror, (CURLcode code), (code)) \
	V(curl_free, (void *p), (p)) \
	F(time_t, curl_getdate, (const char *p, const time_t *unused), \
	    (p, unused)) \
	F(CURL *, curl_easy_init, (void), ()) \
	V(curl_easy_cleanup, (CURL *h), (h)) \
	V(curl_easy_reset, (CURL *h), (h)) \
	F(CURLHcode, curl_easy_header, (CURL *h, const char *name, \
	    size_t index, unsigned int origin, int request, \
	    struct curl_header **out), (h, name, index, origin, request, out)) \
	F(struct curl_slist *, curl_slist_append, (struct curl_slist *l, \
	    const char *s), (l, s)) \
	V(curl_slist_free_all, (struct curl_slist *l), (l)) \
	F(CURLU *, curl_url, (void), ()) \
	V(curl_url_cleanup, (CURLU *u), (u)) \
	F(CURLUcode, curl_url_get, (CURLU *u, CURLUPart what, char **part, \
	    unsigned int flags), (u, what, part, flags)) \
	F(CURLUcode, curl_url_set, (CURLU *u, CURLUPart what, \
	    const char *part, unsigned int flags), (u, what, part, flags)) \
	F(CURLM *, curl_multi_init, (void), ()) \
	F(CURLMcode, curl_multi_cleanup, (CURLM *m), (m)) \
	F(CURLMcode, curl_multi_add_handle, (CURLM *m, CURL *h), (m, h)) \
	F(CURLMcode, curl_multi_remove_handle, (CURLM *m, CURL *h), (m, h)) \
	F(CURLMcode, curl_multi_assign, (CURLM *m, curl_socket_t fd, \
	    void *p), (m, fd, p)) \
	F(CURLMcode, curl_multi_socket_action, (CURLM *m, curl_socket_t fd, \
	    int mask, int *running), (m, fd, mask, running)) \
	F(CURLMsg *, curl_multi_info_read, (CURLM *m, int *left), (m, left))

/* X(ret, name, fixed params): the one argument after them is variadic. */
#define NETLIB_CURL_VARIADIC(X) \
	X(CURLcode, curl_easy_setopt, (CURL *h, CURLoption opt, ...)) \
	X(CURLMcode, curl_multi_setopt, (CURLM *m, CURLMoption opt, ...)) \
	X(CURLcode, curl_easy_getinfo, (CURL *h, CURLINFO info, ...))

#endif
