/* rl_tls.c: the TLS transport, OpenSSL's libssl under a non-blocking
 * socket.
 *
 * libssl is opened with dlopen(3) the first time TLS is set up, not linked:
 * linking it makes every start of redlock resolve libcrypto's symbols
 * (3.8 million instructions instead of 0.2 million for --version), and
 * most runs never speak TLS. The handshake runs inside the connection's
 * connect timeout, driven by poll like everything else. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "rl_conn.h"
#include "rl_tcp.h"

#define F(name) __typeof__(name) *name
static struct {
	void *lib;
	F(TLS_client_method);
	F(SSL_CTX_new);
	F(SSL_CTX_free);
	F(SSL_CTX_ctrl);
	F(SSL_CTX_set_options);
	F(SSL_CTX_set_verify);
	F(SSL_CTX_load_verify_locations);
	F(SSL_CTX_set_default_verify_paths);
	F(SSL_CTX_set_default_verify_dir);
	F(X509_get_default_cert_dir);
	F(X509_get_default_cert_dir_env);
	F(X509_get_default_cert_file_env);
	F(SSL_CTX_use_certificate_chain_file);
	F(SSL_CTX_use_PrivateKey_file);
	F(SSL_CTX_check_private_key);
	F(SSL_new);
	F(SSL_free);
	F(SSL_ctrl);
	F(SSL_set_fd);
	F(SSL_set1_host);
	F(SSL_get0_param);
	F(SSL_connect);
	F(SSL_read);
	F(SSL_write);
	F(SSL_get_error);
	F(SSL_get_verify_result);
	F(X509_VERIFY_PARAM_set1_ip_asc);
	F(X509_verify_cert_error_string);
	F(ERR_get_error);
	F(ERR_peek_last_error);
	F(ERR_clear_error);
	F(ERR_reason_error_string);
} ssl;
#undef F

static const char *const libnames[] = { "libssl.so.3", "libssl.so" };

static SSL_CTX *ctx;
static char sni[256];		/* --sni, or empty */
static int insecure;
static int bundle_pending;	/* the system's bundle, not loaded yet */

/* dlsym's void * into a function pointer, as POSIX allows. */
#define SYM(name) \
	(*(void **)&ssl.name = dlsym(ssl.lib, #name)) == NULL

static int
load(char *err, size_t errlen)
{
	size_t i;

	if (ssl.lib != NULL)
		return 0;
	for (i = 0; i < sizeof(libnames) / sizeof(libnames[0]); i++)
		if ((ssl.lib = dlopen(libnames[i], RTLD_NOW | RTLD_LOCAL)) !=
		    NULL)
			break;
	if (ssl.lib == NULL) {
		snprintf(err, errlen, "rediss:// needs OpenSSL's libssl.so.3, "
		    "which cannot be loaded: install it (Debian: libssl3)");
		return -1;
	}
	if (SYM(TLS_client_method) || SYM(SSL_CTX_new) || SYM(SSL_CTX_free) ||
	    SYM(SSL_CTX_ctrl) || SYM(SSL_CTX_set_options) ||
	    SYM(SSL_CTX_set_verify) || SYM(SSL_CTX_load_verify_locations) ||
	    SYM(SSL_CTX_set_default_verify_paths) ||
	    SYM(SSL_CTX_set_default_verify_dir) ||
	    SYM(X509_get_default_cert_dir) ||
	    SYM(X509_get_default_cert_dir_env) ||
	    SYM(X509_get_default_cert_file_env) ||
	    SYM(SSL_CTX_use_certificate_chain_file) ||
	    SYM(SSL_CTX_use_PrivateKey_file) ||
	    SYM(SSL_CTX_check_private_key) || SYM(SSL_new) ||
	    SYM(SSL_free) || SYM(SSL_ctrl) || SYM(SSL_set_fd) ||
	    SYM(SSL_set1_host) || SYM(SSL_get0_param) || SYM(SSL_connect) ||
	    SYM(SSL_read) || SYM(SSL_write) || SYM(SSL_get_error) ||
	    SYM(SSL_get_verify_result) ||
	    SYM(X509_VERIFY_PARAM_set1_ip_asc) ||
	    SYM(X509_verify_cert_error_string) || SYM(ERR_get_error) ||
	    SYM(ERR_peek_last_error) || SYM(ERR_clear_error) ||
	    SYM(ERR_reason_error_string)) {
		snprintf(err, errlen, "the libssl found lacks %s: rediss:// "
		    "needs OpenSSL 3 (Debian: libssl3)", dlerror());
		dlclose(ssl.lib);
		ssl.lib = NULL;
		return -1;
	}
	return 0;
}

/* OpenSSL's reason for the last failure, or DFLT. */
static const char *
reason(const char *dflt)
{
	unsigned long e = ssl.ERR_peek_last_error();
	const char *r = e != 0 ? ssl.ERR_reason_error_string(e) : NULL;

	return r != NULL ? r : dflt;
}

/* Read FILE for OPT, or say why it cannot be. */
static int
readable(const char *opt, const char *file, char *err, size_t errlen)
{
	FILE *f = fopen(file, "r");

	if (f == NULL) {
		snprintf(err, errlen, "cannot read %s %s: %s", opt, file,
		    strerror(errno));
		return -1;
	}
	fclose(f);
	return 0;
}

/* DIR has certificates under hashed names (c_rehash, openssl rehash). */
static int
hashed(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n;
	int found = 0;

	if (d == NULL)
		return 0;
	while (!found && (e = readdir(d)) != NULL) {
		n = strspn(e->d_name, "0123456789abcdef");
		found = n == 8 && e->d_name[8] == '.' &&
		    e->d_name[9] >= '0' && e->d_name[9] <= '9';
	}
	closedir(d);
	return found;
}

/* The system's CA certificates. Its hashed directory is read lazily, the
 * one certificate a handshake needs; its bundle (SSL_CERT_FILE) is parsed
 * whole (some 140 certificates, 17 ms of every run here), so it is loaded
 * only where the directory has no hashed names, or once a server's issuer
 * is not in the directory (tls_finish). */
static int
system_cas(void)
{
	const char *dir = getenv(ssl.X509_get_default_cert_dir_env());

	if (dir == NULL || dir[0] == '\0' || strchr(dir, ':') != NULL)
		dir = ssl.X509_get_default_cert_dir();
	if (!hashed(dir))
		return ssl.SSL_CTX_set_default_verify_paths(ctx);
	bundle_pending = 1;
	return ssl.SSL_CTX_set_default_verify_dir(ctx);
}

static int
load_certs(const struct rl_tls_opts *o, char *err, size_t errlen)
{
	if ((o->cacert != NULL || o->cacertdir != NULL) &&
	    ((o->cacert != NULL &&
	    readable("--cacert", o->cacert, err, errlen) < 0) ||
	    ssl.SSL_CTX_load_verify_locations(ctx, o->cacert,
	    o->cacertdir) != 1)) {
		if (err[0] == '\0')
			snprintf(err, errlen, "cannot load the CA certificates "
			    "of %s %s: %s", o->cacert ? "--cacert" :
			    "--cacertdir", o->cacert ? o->cacert :
			    o->cacertdir, reason("no certificate in it"));
		return -1;
	}
	/* Without verification no CA is needed. */
	if (o->cacert == NULL && o->cacertdir == NULL && !o->insecure &&
	    system_cas() != 1) {
		snprintf(err, errlen, "cannot load the system's CA "
		    "certificates: %s; give --cacert FILE", reason("unknown"));
		return -1;
	}
	if ((o->cert == NULL) != (o->key == NULL)) {
		snprintf(err, errlen, "--cert and --key go together: give "
		    "both for a client certificate, or neither");
		return -1;
	}
	if (o->cert == NULL)
		return 0;
	if (readable("--cert", o->cert, err, errlen) < 0 ||
	    readable("--key", o->key, err, errlen) < 0)
		return -1;
	if (ssl.SSL_CTX_use_certificate_chain_file(ctx, o->cert) != 1) {
		snprintf(err, errlen, "cannot load --cert %s: %s", o->cert,
		    reason("not a PEM certificate"));
		return -1;
	}
	if (ssl.SSL_CTX_use_PrivateKey_file(ctx, o->key,
	    SSL_FILETYPE_PEM) != 1 || ssl.SSL_CTX_check_private_key(ctx) != 1) {
		snprintf(err, errlen, "cannot use --key %s with --cert %s: %s",
		    o->key, o->cert, reason("not its private key"));
		return -1;
	}
	return 0;
}

const char *
rl_tls_version(void)
{
	const char *(*version)(int);
	char err[256];

	if (load(err, sizeof(err)) < 0)
		return NULL;
	*(void **)&version = dlsym(ssl.lib, "OpenSSL_version");
	return version != NULL ? version(OPENSSL_VERSION) : NULL;
}

int
rl_tls_setup(const struct rl_tls_opts *o, char *err, size_t errlen)
{
	err[0] = '\0';
	if (load(err, errlen) < 0)
		return RL_TLS_NOLIB;
	if (ctx != NULL)
		ssl.SSL_CTX_free(ctx);
	ssl.ERR_clear_error();
	if ((ctx = ssl.SSL_CTX_new(ssl.TLS_client_method())) == NULL) {
		snprintf(err, errlen, "cannot set up TLS: %s",
		    reason("out of memory"));
		return -1;
	}
	ssl.SSL_CTX_ctrl(ctx, SSL_CTRL_SET_MIN_PROTO_VERSION, TLS1_2_VERSION,
	    NULL);
	/* The write buffer grows between retries of one SSL_write. */
	ssl.SSL_CTX_ctrl(ctx, SSL_CTRL_MODE, SSL_MODE_ENABLE_PARTIAL_WRITE |
	    SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER, NULL);
	/* A server that closes without close_notify (CLIENT KILL, exit)
	 * has closed the connection, no more. */
	ssl.SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
	insecure = o->insecure;
	bundle_pending = 0;
	ssl.SSL_CTX_set_verify(ctx, insecure ? SSL_VERIFY_NONE :
	    SSL_VERIFY_PEER, NULL);
	snprintf(sni, sizeof(sni), "%s", o->sni != NULL ? o->sni : "");
	if (load_certs(o, err, errlen) < 0) {
		ssl.SSL_CTX_free(ctx);
		ctx = NULL;
		return -1;
	}
	return 0;
}

/* ---- the transport ---- */

struct tls {
	struct rl_tcp tcp;
	SSL *ssl;
	char why[256];		/* the last read or write failure */
};

static void
tls_free(struct rl_conn *c)
{
	struct tls *t = c->priv;

	if (t == NULL)
		return;
	/* No SSL_shutdown: a forked watchdog may still own this session,
	 * and a close_notify written here would end it for both. */
	if (t->ssl != NULL)
		ssl.SSL_free(t->ssl);
	t->tcp.fd = c->fd;
	rl_tcp_clear(&t->tcp);
	free(t);
	c->priv = NULL;
	c->fd = -1;
}

static int
fail_open(struct rl_conn *c, const char *why)
{
	rl_error_io(c->url, "cannot connect to", why, c->why, sizeof(c->why));
	return -1;
}

static int
tls_open(struct rl_conn *c)
{
	struct tls *t;
	char err[RL_WHY_MAX];

	if (ctx == NULL && rl_tls_setup(&(struct rl_tls_opts){ 0 }, err,
	    sizeof(err)) < 0)
		return fail_open(c, err);
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return fail_open(c, "out of memory");
	rl_tcp_init(&t->tcp);
	if (rl_tcp_start(&t->tcp, c->url->host, c->url->port, NULL) < 0) {
		fail_open(c, t->tcp.why);
		free(t);
		return -1;
	}
	c->priv = t;
	c->fd = t->tcp.fd;
	return 0;
}

static int
is_ip(const char *host)
{
	unsigned char a[16];

	return inet_pton(AF_INET, host, a) == 1 ||
	    inet_pton(AF_INET6, host, a) == 1;
}

/* The TCP connection is up: start TLS on it, naming the server. */
static int
start(struct rl_conn *c, struct tls *t)
{
	const char *name = sni[0] != '\0' ? sni : c->url->host;
	int ok;

	ssl.ERR_clear_error();
	if ((t->ssl = ssl.SSL_new(ctx)) == NULL ||
	    ssl.SSL_set_fd(t->ssl, c->fd) != 1)
		return fail_open(c, reason("out of memory"));
	if (!is_ip(name) && ssl.SSL_ctrl(t->ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME,
	    TLSEXT_NAMETYPE_host_name, (void *)(uintptr_t)name) != 1)
		return fail_open(c, "the server name is not one TLS can send");
	if (insecure)
		return 0;
	if (is_ip(name))
		ok = ssl.X509_VERIFY_PARAM_set1_ip_asc(
		    ssl.SSL_get0_param(t->ssl), name);
	else
		ok = ssl.SSL_set1_host(t->ssl, name);
	if (ok != 1)
		return fail_open(c, "the server name cannot be verified");
	return 0;
}

/* The handshake failed: say why, and what to do. */
static int
handshake_failed(struct rl_conn *c, struct tls *t, int e)
{
	char why[RL_WHY_MAX];
	long v = ssl.SSL_get_verify_result(t->ssl);
	unsigned long err = ssl.ERR_peek_last_error();

	if (!insecure && v != X509_V_OK)
		c->err = RL_EAUTH;	/* no retry will change it */
	if (!insecure && v == X509_V_ERR_HOSTNAME_MISMATCH)
		snprintf(why, sizeof(why), "TLS certificate verification "
		    "failed: %s: the certificate is not for %s; connect "
		    "with a name it was issued for, or give that name with "
		    "--sni", ssl.X509_verify_cert_error_string(v),
		    sni[0] != '\0' ? sni : c->url->host);
	else if (!insecure && v != X509_V_OK)
		snprintf(why, sizeof(why), "TLS certificate verification "
		    "failed: %s; give the CA that signed the server's "
		    "certificate with --cacert (or REDLOCK_CACERT), or skip "
		    "verification with --insecure",
		    ssl.X509_verify_cert_error_string(v));
	else if (e == SSL_ERROR_SSL && err != 0 &&
	    ERR_GET_LIB(err) == ERR_LIB_SSL &&
	    (ERR_GET_REASON(err) == SSL_R_WRONG_VERSION_NUMBER ||
	    ERR_GET_REASON(err) == SSL_R_PACKET_LENGTH_TOO_LONG))
		snprintf(why, sizeof(why), "the server does not speak TLS "
		    "there (%s); for a plain port use redis://",
		    reason("no TLS"));
	else if (e == SSL_ERROR_SYSCALL || e == SSL_ERROR_ZERO_RETURN ||
	    err == 0)
		snprintf(why, sizeof(why), "the server closed the connection "
		    "during the TLS handshake; is it a TLS port?");
	else
		snprintf(why, sizeof(why), "TLS handshake failed: %s%s",
		    reason("unknown error"), ERR_GET_REASON(err) ==
		    SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED ? "; the server "
		    "wants a client certificate: give --cert and --key" : "");
	return fail_open(c, why);
}

/* The issuer was not among the CAs loaded so far. */
static int
unknown_issuer(long v)
{
	return v == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY ||
	    v == X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN ||
	    v == X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT;
}

/* Connect again from the start, after loading the system's bundle: 1,
 * or -1 (C->why). */
static int
with_bundle(struct rl_conn *c, struct tls *t)
{
	bundle_pending = 0;
	ssl.ERR_clear_error();
	if (ssl.SSL_CTX_set_default_verify_paths(ctx) != 1)
		return fail_open(c, reason("cannot load the system's CAs"));
	ssl.SSL_free(t->ssl);
	t->ssl = NULL;
	t->tcp.fd = c->fd;
	if (rl_tcp_start(&t->tcp, c->url->host, c->url->port, NULL) < 0) {
		c->fd = -1;
		return fail_open(c, t->tcp.why);
	}
	c->fd = t->tcp.fd;
	c->want = 0;
	c->stage = NULL;
	return 1;
}

static int
tls_finish(struct rl_conn *c)
{
	struct tls *t = c->priv;
	int r, e;

	if (t->ssl == NULL) {
		r = rl_tcp_finish(&t->tcp);
		c->fd = t->tcp.fd;
		if (r < 0)
			return fail_open(c, t->tcp.why);
		if (r > 0)
			return 1;
		if (start(c, t) < 0)
			return -1;
		c->stage = "timed out in the TLS handshake (see "
		    "--connect-timeout); if the port is a plain one, use "
		    "redis://";
	}
	ssl.ERR_clear_error();
	if ((r = ssl.SSL_connect(t->ssl)) == 1) {
		c->want = 0;
		return 0;
	}
	e = ssl.SSL_get_error(t->ssl, r);
	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
		c->want = e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
		return 1;
	}
	if (bundle_pending && !insecure &&
	    unknown_issuer(ssl.SSL_get_verify_result(t->ssl)))
		return with_bundle(c, t);
	return handshake_failed(c, t, e);
}

/* After SSL_read or SSL_write returned R: the bytes, or -1 with errno
 * (EAGAIN: try again when the socket is ready), or 0 at the end. FRESH:
 * nothing came on the connection yet. */
static ssize_t
result(struct tls *t, int r, int fresh)
{
	int e;
	unsigned long err;

	if (r > 0)
		return r;
	e = ssl.SSL_get_error(t->ssl, r);
	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
		errno = EAGAIN;
		return -1;
	}
	err = ssl.ERR_peek_last_error();
	if (fresh && (e == SSL_ERROR_ZERO_RETURN ||
	    e == SSL_ERROR_SYSCALL)) {
		/* TLS 1.3 ends the handshake before the server has checked
		 * the client: its refusal is a hang-up on the first bytes. */
		snprintf(t->why, sizeof(t->why), "the server hung up on the "
		    "new TLS connection; if it asks for client certificates "
		    "(tls-auth-clients), give --cert and --key; else see its "
		    "log");
		errno = EIO;
		return -1;
	}
	if (e == SSL_ERROR_ZERO_RETURN)
		return 0;
	if (e == SSL_ERROR_SYSCALL && err == 0)
		snprintf(t->why, sizeof(t->why), "%s", errno != 0 ?
		    strerror(errno) : "the connection broke");
	else if (ERR_GET_REASON(err) == SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED)
		snprintf(t->why, sizeof(t->why), "the server wants a client "
		    "certificate (%s): give --cert and --key",
		    reason("certificate required"));
	else
		snprintf(t->why, sizeof(t->why), "TLS: %s",
		    reason("unknown error"));
	errno = EIO;
	return -1;
}

/* Everything decrypted so far, up to LEN: a short count means the socket
 * has nothing more for now. */
static ssize_t
tls_read(struct rl_conn *c, void *buf, size_t len)
{
	struct tls *t = c->priv;
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		ssl.ERR_clear_error();
		n = result(t, ssl.SSL_read(t->ssl, (char *)buf + got,
		    (int)(len - got > 16384 ? 16384 : len - got)),
		    c->rx + got == 0);
		if (n <= 0)
			return got > 0 ? (ssize_t)got : n;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

static ssize_t
tls_write(struct rl_conn *c, const void *buf, size_t len)
{
	struct tls *t = c->priv;

	ssl.ERR_clear_error();
	return result(t, ssl.SSL_write(t->ssl, buf,
	    (int)(len > 1 << 30 ? 1 << 30 : len)), c->rx == 0);
}

static const char *
tls_error(struct rl_conn *c)
{
	struct tls *t = c->priv;

	return t != NULL && t->why[0] != '\0' ? t->why : strerror(errno);
}

static void
tls_close(struct rl_conn *c)
{
	tls_free(c);
}

const struct rl_transport rl_transport_tls = {
	tls_open, tls_finish, tls_read, tls_write, tls_close, tls_error
};
