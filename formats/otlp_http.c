/*
 * The exporter's HTTP/1.1 client: POST a body to the collector over one
 * keep-alive connection, plain TCP or TLS (OpenSSL, the certificate and
 * the host name verified unless insecure).  It runs on the exporter's
 * thread, so it may block, but never past the deadline it is given:
 * every connect, handshake, write and read waits in poll().
 * (Name resolution, getaddrinfo, is the one wait it cannot bound.)
 */

#include <sys/types.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "formats.h"

/* A response's head (status line and fields) longer is refused. */
#define OTLP_HTTP_HEAD_MAX	((size_t)64 * 1024)
/*
 * A response body is read and thrown away up to this much (a collector's
 * answer is a few bytes of partial-success); a longer one closes the
 * connection instead of being read.
 */
#define OTLP_HTTP_BODY_MAX	((size_t)1024 * 1024)
/* Interim (1xx) answers skipped before the final one, at most. */
#define OTLP_HTTP_INTERIM_MAX	8
/* A 2xx body this short is read for partial_success.rejected_spans. */
#define OTLP_HTTP_PARTIAL_MAX	1024
/* Retry-After beyond this (seconds) is taken as this. */
#define OTLP_HTTP_RETRY_MAX	3600

struct otlp_http {
	struct otlp_url	 url;
	char		*head;		/* the request head, Content-Length
					   left to fill */
	SSL_CTX		*ctx;		/* https */
	SSL		*ssl;
	int		 fd;		/* -1: not connected */
	const _Atomic int64_t *limit;	/* or NULL */
	char		 buf[16384];	/* read, not yet used */
	size_t		 off, len;
	int64_t		 rejected;	/* the last answer's rejected_spans */
	int		 fatal;		/* the last failure will not mend */
	struct addrinfo	*ai;		/* the collector's addresses, kept */
};

/* Let another thread bring h's deadlines forward through *limit. */
void
otlp_http_limit(struct otlp_http *h, const _Atomic int64_t *limit)
{
	h->limit = limit;
}

/* The deadline of a wait: the one given, or h's limit when earlier. */
static int64_t
otlp_http_deadline(struct otlp_http *h, int64_t deadline)
{
	int64_t	limit;

	if (h->limit != NULL && (limit = atomic_load(h->limit)) < deadline)
		return limit;
	return deadline;
}

/*
 * The milliseconds poll() may wait before deadline, at least 0; at most
 * a slice when a limit may come.
 */
static int
otlp_http_left(struct otlp_http *h, int64_t deadline)
{
	int64_t	left = deadline - clock_mono_ns();
	int	max = h->limit != NULL ? OTLP_HTTP_SLICE_MS : 60000;

	if (left <= 0)
		return 0;
	left = (left + 999999) / 1000000;
	return left > max ? max : (int)left;
}

/* Wait until h's socket is ready for events, by deadline; -1 on time. */
static int
otlp_http_wait(struct otlp_http *h, short events, int64_t deadline,
    char **cause)
{
	struct pollfd	pfd;
	int		n;

	for (;;) {
		deadline = otlp_http_deadline(h, deadline);
		pfd.fd = h->fd;
		pfd.events = events;
		pfd.revents = 0;
		n = poll(&pfd, 1, otlp_http_left(h, deadline));
		if (n > 0)
			return 0;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			xasprintf(cause, "poll: %s", strerror(errno));
			return -1;
		}
		if (clock_mono_ns() >= otlp_http_deadline(h, deadline)) {
			xasprintf(cause, "timed out");
			return -1;
		}
	}
}

/* Drop h's connection. */
static void
otlp_http_close(struct otlp_http *h)
{
	if (h->ssl != NULL) {
		SSL_free(h->ssl);
		h->ssl = NULL;
	}
	if (h->fd != -1)
		close(h->fd);
	h->fd = -1;
	h->off = h->len = 0;
}

/* Make a client for c's endpoint; NULL with *cause when it cannot be. */
struct otlp_http *
otlp_http_new(const struct otlp_config *c, char **cause)
{
	struct otlp_http	*h;
	char			*why = NULL, *hdrs = NULL, *t, *path;
	size_t			 i;

	h = xcalloc(1, sizeof *h);
	h->fd = -1;
	if (otlp_url_parse(c->endpoint, &h->url, &why) != 0) {
		xasprintf(cause, "bad collector URL: %s", why);
		free(why);
		free(h);
		return NULL;
	}
	if (*h->url.path == '\0' || *h->url.path == '?') {
		/* http://h:4318?k=v: the request line needs a path. */
		xasprintf(&path, "/%s", h->url.path);
		free(h->url.path);
		h->url.path = path;
	}
	if (h->url.tls) {
		h->ctx = SSL_CTX_new(TLS_client_method());
		if (h->ctx == NULL) {
			xasprintf(cause, "cannot make a TLS context");
			goto fail;
		}
		SSL_CTX_set_min_proto_version(h->ctx, TLS1_2_VERSION);
		SSL_CTX_set_mode(h->ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
		if (c->insecure)
			SSL_CTX_set_verify(h->ctx, SSL_VERIFY_NONE, NULL);
		else {
			SSL_CTX_set_verify(h->ctx, SSL_VERIFY_PEER, NULL);
			if (c->cacert != NULL ? SSL_CTX_load_verify_locations(
			    h->ctx, c->cacert, NULL) != 1 :
			    SSL_CTX_set_default_verify_paths(h->ctx) != 1) {
				xasprintf(cause, "cannot load the CA "
				    "certificates%s%s", c->cacert != NULL ?
				    " from " : " of the system",
				    c->cacert != NULL ? c->cacert : "");
				goto fail;
			}
		}
	}
	hdrs = xstrdup("");
	for (i = 0; i < c->nheaders; i++) {
		xasprintf(&t, "%s%s\r\n", hdrs, c->headers[i]);
		explicit_bzero(hdrs, strlen(hdrs));
		free(hdrs);
		hdrs = t;
	}
	xasprintf(&h->head, "POST %s HTTP/1.1\r\nHost: %s\r\n"
	    "User-Agent: mcpreel/%s\r\nContent-Type: %s\r\n%s"
	    "Content-Length: ", h->url.path, h->url.hostport, MCPREEL_VERSION,
	    c->protocol == OTLP_HTTP_JSON ? "application/json" :
	    "application/x-protobuf", hdrs);
	explicit_bzero(hdrs, strlen(hdrs));
	free(hdrs);
	return h;
fail:
	otlp_http_free(h);
	return NULL;
}

/* Free h and close its connection. */
void
otlp_http_free(struct otlp_http *h)
{
	if (h == NULL)
		return;
	otlp_http_close(h);
	if (h->ai != NULL)
		freeaddrinfo(h->ai);
	if (h->ctx != NULL)
		SSL_CTX_free(h->ctx);
	otlp_url_clear(&h->url);
	if (h->head != NULL) {
		explicit_bzero(h->head, strlen(h->head));
		free(h->head);
	}
	free(h);
}

/* Connect fd (non-blocking) to one address by deadline. */
static int
otlp_http_connect_one(struct otlp_http *h, const struct addrinfo *ai,
    int64_t deadline, char **cause)
{
	int		err = 0, one = 1;
	socklen_t	len = sizeof err;

	h->fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, ai->ai_protocol);
	if (h->fd == -1) {
		xasprintf(cause, "socket: %s", strerror(errno));
		return -1;
	}
	setsockopt(h->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (connect(h->fd, ai->ai_addr, ai->ai_addrlen) == 0)
		return 0;
	if (errno != EINPROGRESS) {
		xasprintf(cause, "connect: %s", strerror(errno));
		goto fail;
	}
	if (otlp_http_wait(h, POLLOUT, deadline, cause) != 0)
		goto fail;
	if (getsockopt(h->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
		err = errno;
	if (err != 0) {
		xasprintf(cause, "connect: %s", strerror(err));
		goto fail;
	}
	return 0;
fail:
	close(h->fd);
	h->fd = -1;
	return -1;
}

/* The TLS handshake on h's connection by deadline, names checked. */
static int
otlp_http_tls(struct otlp_http *h, int64_t deadline, char **cause)
{
	unsigned char	 addr[16];
	int		 r, e, ip;
	long		 vr;
	unsigned long	 el;

	if ((h->ssl = SSL_new(h->ctx)) == NULL ||
	    SSL_set_fd(h->ssl, h->fd) != 1) {
		xasprintf(cause, "cannot start TLS");
		return -1;
	}
	ip = inet_pton(AF_INET, h->url.host, addr) == 1 ||
	    inet_pton(AF_INET6, h->url.host, addr) == 1;
	if (!ip)
		SSL_set_tlsext_host_name(h->ssl, h->url.host);
	if (SSL_get_verify_mode(h->ssl) != SSL_VERIFY_NONE) {
		X509_VERIFY_PARAM	*vp = SSL_get0_param(h->ssl);

		if (ip)
			X509_VERIFY_PARAM_set1_ip_asc(vp, h->url.host);
		else {
			X509_VERIFY_PARAM_set_hostflags(vp,
			    X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
			X509_VERIFY_PARAM_set1_host(vp, h->url.host, 0);
		}
	}
	for (;;) {
		ERR_clear_error();
		if ((r = SSL_connect(h->ssl)) == 1)
			return 0;
		e = SSL_get_error(h->ssl, r);
		if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
			if (otlp_http_wait(h, e == SSL_ERROR_WANT_READ ?
			    POLLIN : POLLOUT, deadline, cause) != 0)
				return -1;
			continue;
		}
		vr = SSL_get_verify_result(h->ssl);
		/* A certificate does not mend by trying again. */
		h->fatal = vr != X509_V_OK;
		if (vr == X509_V_ERR_HOSTNAME_MISMATCH ||
		    vr == X509_V_ERR_IP_ADDRESS_MISMATCH)
			xasprintf(cause, "TLS: the collector's certificate is "
			    "not for %s; name the collector in the URL as its "
			    "certificate does", h->url.host);
		else if (vr != X509_V_OK)
			xasprintf(cause, "TLS: the collector's certificate is "
			    "not trusted (%s); give a CA file in "
			    "OTEL_EXPORTER_OTLP_CERTIFICATE",
			    X509_verify_cert_error_string(vr));
		else if ((el = ERR_peek_error()) != 0 &&
		    ERR_reason_error_string(el) != NULL)
			xasprintf(cause, "TLS handshake failed (%s); is it an "
			    "https collector?  (a client certificate is not "
			    "supported)", ERR_reason_error_string(el));
		else
			xasprintf(cause, "TLS handshake failed; is it an https "
			    "collector?  (a client certificate is not "
			    "supported)");
		return -1;
	}
}

/*
 * Connect h to the collector (each address in turn) by deadline.  The
 * host is resolved once and its addresses kept; it is resolved again
 * only after a connect to every kept address failed.  getaddrinfo()
 * itself cannot be bounded: a resolver that hangs holds this thread (and
 * otlp_stop's join) as long as it takes; so it is not started past the
 * deadline, and a kept address needs no resolver at all.
 */
static int
otlp_http_connect(struct otlp_http *h, int64_t deadline, char **cause)
{
	struct addrinfo	 hints, *ai;
	char		*why = NULL;
	int		 r;

	if (h->ai == NULL) {
		if (clock_mono_ns() >= otlp_http_deadline(h, deadline)) {
			xasprintf(cause, "timed out");
			return -1;
		}
		memset(&hints, 0, sizeof hints);
		hints.ai_family = AF_UNSPEC;
		hints.ai_socktype = SOCK_STREAM;
		hints.ai_flags = AI_ADDRCONFIG;
		r = getaddrinfo(h->url.host, h->url.port, &hints, &h->ai);
		if (r != 0) {
			h->ai = NULL;
			xasprintf(cause, "cannot resolve %s: %s", h->url.host,
			    gai_strerror(r));
			return -1;
		}
	}
	for (ai = h->ai; ai != NULL; ai = ai->ai_next) {
		free(why);
		why = NULL;
		if (otlp_http_connect_one(h, ai, deadline, &why) == 0)
			break;
		if (clock_mono_ns() >= otlp_http_deadline(h, deadline))
			break;
	}
	if (h->fd == -1 && ai == NULL) {
		/* Every address failed: the next connect resolves anew. */
		freeaddrinfo(h->ai);
		h->ai = NULL;
	}
	if (h->fd == -1) {
		xasprintf(cause, "%s", why != NULL ? why : "cannot connect");
		free(why);
		return -1;
	}
	free(why);
	if (h->url.tls && otlp_http_tls(h, deadline, cause) != 0) {
		otlp_http_close(h);
		return -1;
	}
	return 0;
}

/* Write all of p[0..n) by deadline. */
static int
otlp_http_write(struct otlp_http *h, const void *p, size_t n,
    int64_t deadline, char **cause)
{
	const char	*s = p;
	ssize_t		 w;
	int		 e;

	while (n > 0) {
		if (h->ssl != NULL) {
			ERR_clear_error();
			w = SSL_write(h->ssl, s, n > INT32_MAX ? INT32_MAX :
			    (int)n);
			if (w <= 0) {
				e = SSL_get_error(h->ssl, (int)w);
				if (e == SSL_ERROR_WANT_READ ||
				    e == SSL_ERROR_WANT_WRITE) {
					if (otlp_http_wait(h, e ==
					    SSL_ERROR_WANT_READ ? POLLIN :
					    POLLOUT, deadline, cause) != 0)
						return -1;
					continue;
				}
				xasprintf(cause, "TLS write failed");
				return -1;
			}
		} else {
			w = send(h->fd, s, n, MSG_NOSIGNAL);
			if (w < 0) {
				if (errno == EINTR)
					continue;
				if (errno == EAGAIN) {
					if (otlp_http_wait(h, POLLOUT,
					    deadline, cause) != 0)
						return -1;
					continue;
				}
				xasprintf(cause, "write: %s", strerror(errno));
				return -1;
			}
		}
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Read more into h->buf by deadline: its byte count, 0 at EOF, -1. */
static ssize_t
otlp_http_fill(struct otlp_http *h, int64_t deadline, char **cause)
{
	ssize_t	r;
	int	e;

	if (h->off > 0) {
		memmove(h->buf, h->buf + h->off, h->len - h->off);
		h->len -= h->off;
		h->off = 0;
	}
	if (h->len == sizeof h->buf) {
		xasprintf(cause, "read buffer full");
		return -1;
	}
	for (;;) {
		if (h->ssl != NULL) {
			ERR_clear_error();
			r = SSL_read(h->ssl, h->buf + h->len,
			    (int)(sizeof h->buf - h->len));
			if (r <= 0) {
				e = SSL_get_error(h->ssl, (int)r);
				if (e == SSL_ERROR_ZERO_RETURN)
					return 0;
				if (e == SSL_ERROR_WANT_READ ||
				    e == SSL_ERROR_WANT_WRITE) {
					if (otlp_http_wait(h, e ==
					    SSL_ERROR_WANT_READ ? POLLIN :
					    POLLOUT, deadline, cause) != 0)
						return -1;
					continue;
				}
				if (e == SSL_ERROR_SYSCALL && r == 0)
					return 0;
				xasprintf(cause, "TLS read failed");
				return -1;
			}
		} else {
			r = recv(h->fd, h->buf + h->len, sizeof h->buf - h->len,
			    0);
			if (r < 0) {
				if (errno == EINTR)
					continue;
				if (errno == EAGAIN) {
					if (otlp_http_wait(h, POLLIN, deadline,
					    cause) != 0)
						return -1;
					continue;
				}
				xasprintf(cause, "read: %s", strerror(errno));
				return -1;
			}
		}
		h->len += (size_t)r;
		return r;
	}
}

/*
 * One line (CRLF or LF ended) of the answer into *line (NUL-terminated,
 * within h->buf, valid until the next read), counting its bytes against
 * *budget; -1 with *cause.
 */
static int
otlp_http_line(struct otlp_http *h, char **line, size_t *budget,
    int64_t deadline, char **cause)
{
	char	*nl;
	size_t	 n;
	ssize_t	 r;

	for (;;) {
		nl = memchr(h->buf + h->off, '\n', h->len - h->off);
		if (nl != NULL)
			break;
		if (h->len - h->off >= *budget ||
		    h->len - h->off >= sizeof h->buf - 1) {
			xasprintf(cause, "the collector's answer has a line or "
			    "head that is too long");
			return -1;
		}
		if ((r = otlp_http_fill(h, deadline, cause)) < 0)
			return -1;
		if (r == 0) {
			xasprintf(cause, "the collector closed the connection");
			return -1;
		}
	}
	n = (size_t)(nl - (h->buf + h->off)) + 1;
	if (n > *budget) {
		xasprintf(cause, "the collector's answer has a head that is "
		    "too long");
		return -1;
	}
	*budget -= n;
	*line = h->buf + h->off;
	*nl = '\0';
	if (nl > *line && nl[-1] == '\r')
		nl[-1] = '\0';
	h->off += n;
	return 0;
}

/* Read and throw away n bytes of body by deadline (kept in out when
   it is not NULL). */
static int
otlp_http_skip(struct otlp_http *h, uint64_t n, int64_t deadline,
    char *out, char **cause)
{
	size_t	take;
	ssize_t	r;

	while (n > 0) {
		if (h->off == h->len) {
			h->off = h->len = 0;
			if ((r = otlp_http_fill(h, deadline, cause)) < 0)
				return -1;
			if (r == 0) {
				xasprintf(cause, "the collector closed the "
				    "connection in a body");
				return -1;
			}
		}
		take = h->len - h->off;
		if (take > n)
			take = (size_t)n;
		if (out != NULL) {
			memcpy(out, h->buf + h->off, take);
			out += take;
		}
		h->off += take;
		n -= take;
	}
	return 0;
}

/* A chunked body read and thrown away by deadline, at most budget. */
static int
otlp_http_chunked(struct otlp_http *h, size_t budget, int64_t deadline,
    char **cause)
{
	char		*line, *end;
	size_t		 lb;
	unsigned long long n;

	for (;;) {
		lb = 1024;
		if (otlp_http_line(h, &line, &lb, deadline, cause) != 0)
			return -1;
		errno = 0;
		n = strtoull(line, &end, 16);
		if (end == line || errno != 0 || (*end != '\0' &&
		    *end != ';' && *end != ' ' && *end != '\t')) {
			xasprintf(cause, "the collector's chunked body is "
			    "malformed");
			return -1;
		}
		if (n > budget) {
			xasprintf(cause, "the collector's answer is longer "
			    "than %zu bytes", (size_t)OTLP_HTTP_BODY_MAX);
			return -1;
		}
		budget -= (size_t)n;
		if (n == 0)
			break;
		if (otlp_http_skip(h, n, deadline, NULL, cause) != 0)
			return -1;
		lb = 16;
		if (otlp_http_line(h, &line, &lb, deadline, cause) != 0)
			return -1;
		if (*line != '\0') {
			xasprintf(cause, "the collector's chunked body is "
			    "malformed");
			return -1;
		}
	}
	/* Trailer fields, up to the empty line. */
	lb = 16384;
	do {
		if (otlp_http_line(h, &line, &lb, deadline, cause) != 0)
			return -1;
	} while (*line != '\0');
	return 0;
}

/* Retry-After's seconds in v, or -1 when it is a date or bad. */
static int
otlp_http_retry_after(const char *v)
{
	char		*end;
	unsigned long	 n;

	if (*v < '0' || *v > '9')
		return -1;
	errno = 0;
	n = strtoul(v, &end, 10);
	while (*end == ' ' || *end == '\t')
		end++;
	if (*end != '\0')
		return -1;
	if (errno != 0 || n > OTLP_HTTP_RETRY_MAX)
		return OTLP_HTTP_RETRY_MAX;
	return (int)n;
}

/* A protobuf varint at *p (before end), or -1 when it is cut. */
static int
otlp_http_varint(const unsigned char **p, const unsigned char *end,
    uint64_t *v)
{
	int	shift;

	*v = 0;
	for (shift = 0; *p < end && shift < 64; shift += 7) {
		*v |= (uint64_t)(**p & 0x7f) << shift;
		if ((*(*p)++ & 0x80) == 0)
			return 0;
	}
	return -1;
}

/*
 * ExportTraceServiceResponse.partial_success (1).rejected_spans (1) in
 * protobuf body b (n bytes); 0 when absent or unreadable.
 */
static int64_t
otlp_http_rejected_pb(const char *b, size_t n)
{
	const unsigned char	*p = (const unsigned char *)b, *end = p + n;
	const unsigned char	*q, *qend;
	uint64_t		 key, v;

	while (p < end) {
		if (otlp_http_varint(&p, end, &key) != 0)
			return 0;
		if ((key & 7) == 0) {
			if (otlp_http_varint(&p, end, &v) != 0)
				return 0;
			continue;
		}
		if ((key & 7) != 2 || otlp_http_varint(&p, end, &v) != 0 ||
		    v > (uint64_t)(end - p))
			return 0;
		if (key >> 3 != 1) {
			p += v;
			continue;
		}
		for (q = p, qend = p + v; q < qend;) {
			if (otlp_http_varint(&q, qend, &key) != 0)
				return 0;
			if (key == (1 << 3 | 0))
				return otlp_http_varint(&q, qend, &v) == 0 &&
				    v <= INT64_MAX ? (int64_t)v : 0;
			if ((key & 7) == 0) {
				if (otlp_http_varint(&q, qend, &v) != 0)
					return 0;
			} else if ((key & 7) == 2) {
				if (otlp_http_varint(&q, qend, &v) != 0 ||
				    v > (uint64_t)(qend - q))
					return 0;
				q += v;
			} else
				return 0;
		}
		p += v;
	}
	return 0;
}

/* partialSuccess.rejectedSpans in an OTLP/JSON body b; 0 when absent. */
static int64_t
otlp_http_rejected_json(const char *b, size_t n)
{
	json_t		*j, *v;
	int64_t		 r = 0;
	long long	 ll;

	if ((j = json_loadb(b, n, 0, NULL)) == NULL)
		return 0;
	v = json_object_get(json_object_get(j, "partialSuccess"),
	    "rejectedSpans");
	if (json_is_integer(v))
		r = json_integer_value(v);
	else if (json_is_string(v) &&
	    sscanf(json_string_value(v), "%lld", &ll) == 1)
		r = ll;
	json_decref(j);
	return r > 0 ? r : 0;
}

/*
 * Read one answer by deadline: its status and Retry-After, its body read
 * and thrown away (a short 2xx one read for rejected spans); *keep is 0
 * when the connection cannot be used again.  Once a final status came,
 * a body that cannot be read closes the connection but is no failure:
 * the collector has answered.
 */
static int
otlp_http_answer(struct otlp_http *h, int64_t deadline, int *status,
    int *retry_after, int *keep, char **cause)
{
	char		*line, *v, *end, body[OTLP_HTTP_PARTIAL_MAX], *why = NULL;
	size_t		 budget = OTLP_HTTP_HEAD_MAX;
	int		 chunked, has_len, interim = 0, minor, json = 0, r;
	uint64_t	 clen;
	unsigned long long n;

again:
	chunked = has_len = 0;
	clen = 0;
	*retry_after = -1;
	if (otlp_http_line(h, &line, &budget, deadline, cause) != 0)
		return -1;
	if (strncmp(line, "HTTP/1.", 7) != 0 || (line[7] != '0' &&
	    line[7] != '1') || line[8] != ' ' || line[9] < '1' ||
	    line[9] > '5' || line[10] < '0' || line[10] > '9' ||
	    line[11] < '0' || line[11] > '9' || (line[12] != ' ' &&
	    line[12] != '\0')) {
		xasprintf(cause, "the collector's answer is not HTTP/1.1");
		return -1;
	}
	minor = line[7] - '0';
	*status = (line[9] - '0') * 100 + (line[10] - '0') * 10 +
	    (line[11] - '0');
	*keep = minor == 1;
	for (;;) {
		if (otlp_http_line(h, &line, &budget, deadline, cause) != 0)
			return -1;
		if (*line == '\0')
			break;
		if ((v = strchr(line, ':')) == NULL) {
			xasprintf(cause, "the collector's answer has a "
			    "malformed header");
			return -1;
		}
		*v++ = '\0';
		while (*v == ' ' || *v == '\t')
			v++;
		end = v + strlen(v);
		while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
			*--end = '\0';
		if (strcasecmp(line, "Content-Length") == 0) {
			errno = 0;
			n = strtoull(v, &end, 10);
			if (*v < '0' || *v > '9' || *end != '\0' ||
			    errno != 0 || (has_len && n != clen)) {
				xasprintf(cause, "the collector's answer has "
				    "a bad Content-Length");
				return -1;
			}
			has_len = 1;
			clen = n;
		} else if (strcasecmp(line, "Transfer-Encoding") == 0) {
			if (strcasecmp(v, "chunked") != 0) {
				xasprintf(cause, "the collector's answer has "
				    "a transfer coding other than chunked");
				return -1;
			}
			chunked = 1;
		} else if (strcasecmp(line, "Connection") == 0) {
			if (strcasestr(v, "close") != NULL)
				*keep = 0;
			else if (strcasestr(v, "keep-alive") != NULL)
				*keep = 1;
		} else if (strcasecmp(line, "Retry-After") == 0)
			*retry_after = otlp_http_retry_after(v);
		else if (strcasecmp(line, "Content-Type") == 0)
			json = strncasecmp(v, "application/json", 16) == 0;
	}
	if (*status < 200) {
		if (++interim > OTLP_HTTP_INTERIM_MAX) {
			xasprintf(cause, "the collector sent too many interim "
			    "answers");
			return -1;
		}
		goto again;
	}
	h->rejected = 0;
	if (*status == 204 || *status == 304)
		return 0;
	if (chunked)
		r = otlp_http_chunked(h, OTLP_HTTP_BODY_MAX, deadline, &why);
	else if (has_len) {
		if (clen > OTLP_HTTP_BODY_MAX) {
			/* Not worth reading: the connection goes. */
			*keep = 0;
			return 0;
		}
		r = otlp_http_skip(h, clen, deadline, *status / 100 == 2 &&
		    clen <= sizeof body ? body : NULL, &why);
		if (r == 0 && *status / 100 == 2 && clen <= sizeof body)
			h->rejected = json ?
			    otlp_http_rejected_json(body, (size_t)clen) :
			    otlp_http_rejected_pb(body, (size_t)clen);
	} else
		r = 0;
	if (r != 0) {
		log_debug("OpenTelemetry collector: HTTP %d, but %s", *status,
		    why);
		free(why);
		*keep = 0;
		return 0;
	}
	if (has_len || chunked)
		return 0;
	/* No length: the body runs to the close; not read, not kept. */
	*keep = 0;
	return 0;
}

/*
 * One attempt on h's connection (connected first when it is not).
 * *stale is set when a kept connection failed before any answer byte
 * came, so another connection may be tried at once.
 */
static int
otlp_http_try(struct otlp_http *h, const void *body, size_t n,
    int64_t deadline, int *status, int *retry_after, int *stale,
    char **cause)
{
	char	*head;
	int	 reused = h->fd != -1, keep = 0, r;

	*stale = 0;
	if (!reused && otlp_http_connect(h, deadline, cause) != 0)
		return -1;
	xasprintf(&head, "%s%zu\r\n\r\n", h->head, n);
	r = otlp_http_write(h, head, strlen(head), deadline, cause);
	explicit_bzero(head, strlen(head));
	free(head);
	if (r == 0)
		r = otlp_http_write(h, body, n, deadline, cause);
	if (r == 0 && reused && h->len == 0) {
		ssize_t	got = otlp_http_fill(h, deadline, cause);

		if (got == 0) {
			xasprintf(cause, "the collector closed the "
			    "connection");
			r = -1;
		} else if (got < 0)
			r = -1;
		if (r != 0 && clock_mono_ns() < otlp_http_deadline(h, deadline))
			*stale = 1;
	} else if (r != 0 && reused &&
	    clock_mono_ns() < otlp_http_deadline(h, deadline))
		*stale = 1;
	if (r == 0)
		r = otlp_http_answer(h, deadline, status, retry_after, &keep,
		    cause);
	if (r != 0 || !keep)
		otlp_http_close(h);
	return r;
}

/* Spans the last answer said it rejected (partial_success). */
int64_t
otlp_http_rejected(const struct otlp_http *h)
{
	return h->rejected;
}

/* POST body to the collector by deadline (see formats.h). */
int
otlp_http_post(struct otlp_http *h, const void *body, size_t n,
    int64_t deadline, int *status, int *retry_after, char **cause)
{
	char	*why = NULL;
	int	 stale;

	*status = 0;
	*retry_after = -1;
	h->off = h->len = 0;
	h->fatal = 0;
	if (otlp_http_try(h, body, n, deadline, status, retry_after, &stale,
	    &why) == 0)
		return 0;
	if (!stale) {
		*cause = why;
		return h->fatal ? -2 : -1;
	}
	/* A kept connection the collector had closed: once more, anew. */
	free(why);
	if (otlp_http_try(h, body, n, deadline, status, retry_after,
	    &stale, cause) == 0)
		return 0;
	return h->fatal ? -2 : -1;
}
