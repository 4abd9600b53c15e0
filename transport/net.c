/*
 * Network plumbing for the HTTP front end: URLs and listen addresses,
 * the listening socket, and connections to the upstream server, plain or
 * TLS (OpenSSL, verifying the certificate and host name by default).
 */

#include <sys/socket.h>
#include <sys/types.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/listener.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "transport.h"

/* Split "http[s]://host[:port][/prefix][?query]" into its parts. */
int
net_parse_url(const char *s, struct url *u, char **cause)
{
	const char	*p, *host, *hend, *path, *query;
	char		*why = NULL;

	memset(u, 0, sizeof *u);
	if (strncmp(s, "http://", 7) == 0) {
		u->tls = 0;
		p = s + 7;
	} else if (strncmp(s, "https://", 8) == 0) {
		u->tls = 1;
		p = s + 8;
	} else {
		xasprintf(cause, "bad upstream URL '%s': it must start with "
		    "http:// or https://", s);
		return -1;
	}
	/* The URL itself is not quoted: its query may hold a key. */
	if (strchr(p, '#') != NULL) {
		xasprintf(cause, "bad upstream URL: it has a fragment ('#...'), "
		    "which is never sent to a server; remove it");
		return -1;
	}
	path = p + strcspn(p, "/?");
	if (strchr(p, '@') != NULL && strchr(p, '@') < path) {
		xasprintf(cause, "bad upstream URL: user:password@ is not "
		    "supported (and the URL is not repeated here)");
		return -1;
	}
	u->hostport = xstrndup(p, (size_t)(path - p));
	host = u->hostport;
	if (*host == '[') {
		if ((hend = strchr(host, ']')) == NULL)
			goto bad;
		u->host = xstrndup(host + 1, (size_t)(hend - host - 1));
		hend++;
	} else {
		hend = host + strcspn(host, ":");
		u->host = xstrndup(host, (size_t)(hend - host));
	}
	if (*u->host == '\0')
		goto bad;
	if (*hend == ':') {
		char	*end;
		long	 port = strtol(hend + 1, &end, 10);

		/* Digits only: strtol would take " 80", "+80" and "-0". */
		if (hend[1] == '\0' || hend[1 + strspn(hend + 1,
		    "0123456789")] != '\0' || *end != '\0' || port < 1 ||
		    port > 65535)
			goto bad;
		u->port = xstrdup(hend + 1);
	} else if (*hend != '\0')
		goto bad;
	else
		u->port = xstrdup(u->tls ? "443" : "80");
	/*
	 * The prefix is the path alone, dot segments removed, without a
	 * trailing slash: "/mcp" + client path.  The query goes with every
	 * request, in front of the client's own.
	 */
	query = strchr(path, '?');
	/* An empty query is none: "/mcp?" must not add '?' or "&". */
	if (query != NULL && query[1] != '\0')
		u->query = xstrdup(query + 1);
	if (path == query || *path == '\0')
		u->prefix = xstrdup("");
	else if (http_target_remove_dots(path, query != NULL ?
	    (size_t)(query - path) : strlen(path), 0, &u->prefix,
	    &why) != 0) {
		xasprintf(cause, "bad upstream URL: %s", why);
		free(why);
		net_url_clear(u);
		return -1;
	}
	while (*u->prefix != '\0' && u->prefix[strlen(u->prefix) - 1] == '/')
		u->prefix[strlen(u->prefix) - 1] = '\0';
	xasprintf(&u->origin, "%s://%s", u->tls ? "https" : "http",
	    u->hostport);
	return 0;
bad:
	xasprintf(cause, "bad upstream URL '%.*s...': expected http[s]://HOST"
	    "[:PORT][/PATH][?QUERY]", (int)(path - s), s);
	net_url_clear(u);
	return -1;
}

void
net_url_clear(struct url *u)
{
	free(u->host);
	free(u->port);
	free(u->hostport);
	free(u->prefix);
	free(u->query);
	free(u->origin);
	memset(u, 0, sizeof *u);
}

/*
 * Parse a listen address: "PORT" (on 127.0.0.1), "HOST:PORT" or
 * "[V6]:PORT", HOST being a numeric address or "localhost".
 */
int
net_parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *len,
    char **cause)
{
	struct sockaddr_in	*sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)ss;
	char			*host, *port, *end, *copy = xstrdup(s);
	long			 n;

	memset(ss, 0, sizeof *ss);
	if (*copy == '[') {
		host = copy + 1;
		if ((end = strchr(host, ']')) == NULL || end[1] != ':')
			goto bad;
		*end = '\0';
		port = end + 2;
	} else if ((port = strrchr(copy, ':')) != NULL) {
		*port++ = '\0';
		host = copy;
	} else {
		host = "127.0.0.1";
		port = copy;
	}
	n = strtol(port, &end, 10);
	if (*port == '\0' || port[strspn(port, "0123456789")] != '\0' ||
	    *end != '\0' || n < 0 || n > 65535)
		goto bad;
	if (strcmp(host, "localhost") == 0)
		host = "127.0.0.1";
	if (inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)n);
		*len = sizeof *sin;
	} else if (inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)n);
		*len = sizeof *sin6;
	} else
		goto bad;
	free(copy);
	return 0;
bad:
	xasprintf(cause, "bad listen address '%s': expected PORT, HOST:PORT "
	    "or [IPV6]:PORT with a numeric HOST (e.g. 127.0.0.1:8080)", s);
	free(copy);
	return -1;
}

/*
 * Whether an address is a loopback one: 127.0.0.0/8, ::1, or 127.x
 * mapped into IPv6 (::ffff:127.0.0.1, what a dual-stack socket sees).
 */
int
net_addr_is_loopback(const struct sockaddr_storage *ss)
{
	const struct sockaddr_in	*sin = (const void *)ss;
	const struct sockaddr_in6	*sin6 = (const void *)ss;

	if (ss->ss_family == AF_INET)
		return (ntohl(sin->sin_addr.s_addr) >> 24) == 127;
	if (ss->ss_family == AF_INET6 &&
	    IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr))
		return sin6->sin6_addr.s6_addr[12] == 127;
	if (ss->ss_family == AF_INET6)
		return IN6_IS_ADDR_LOOPBACK(&sin6->sin6_addr);
	return 0;
}

/*
 * Whether an Origin header's value names this machine: http or https, the
 * host localhost (or a name under .localhost), 127.0.0.0/8 or [::1], any
 * port, nothing after it.  "null" and anything else are not.
 */
int
net_origin_is_loopback(const char *origin)
{
	const char	*h, *end, *p;
	char		 host[64];
	size_t		 len;
	struct in_addr	 a4;

	if (strncasecmp(origin, "http://", 7) == 0)
		h = origin + 7;
	else if (strncasecmp(origin, "https://", 8) == 0)
		h = origin + 8;
	else
		return 0;
	if (*h == '[') {
		if ((end = strchr(h, ']')) == NULL)
			return 0;
		len = (size_t)(end - h) + 1;
		p = end + 1;
	} else {
		len = strcspn(h, ":/?#");
		p = h + len;
	}
	if (*p == ':') {
		for (p++; *p >= '0' && *p <= '9'; p++)
			;
	}
	if (*p != '\0' || len == 0 || len >= sizeof host)
		return 0;
	memcpy(host, h, len);
	host[len] = '\0';
	if (strcasecmp(host, "[::1]") == 0 || strcasecmp(host, "localhost") == 0)
		return 1;
	if (len > 10 && strcasecmp(host + len - 10, ".localhost") == 0)
		return 1;
	if (inet_pton(AF_INET, host, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	return 0;
}

/* An address as "http://HOST:PORT" (brackets for IPv6). */
char *
net_addr_origin(const struct sockaddr *sa)
{
	char	 host[INET6_ADDRSTRLEN], *s;
	int	 port;

	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const void *)sa;

		inet_ntop(AF_INET6, &sin6->sin6_addr, host, sizeof host);
		port = ntohs(sin6->sin6_port);
		xasprintf(&s, "http://[%s]:%d", host, port);
	} else {
		const struct sockaddr_in *sin = (const void *)sa;

		inet_ntop(AF_INET, &sin->sin_addr, host, sizeof host);
		port = ntohs(sin->sin_port);
		xasprintf(&s, "http://%s:%d", host, port);
	}
	return s;
}

/*
 * Listen on addr; *origin gets the address actually bound (port 0 picks a
 * free one) as "http://HOST:PORT".
 */
struct evconnlistener *
net_listen(struct event_base *base, const struct sockaddr_storage *ss,
    socklen_t len, evconnlistener_cb cb, void *arg, char **origin,
    char **cause)
{
	struct evconnlistener	*l;
	struct sockaddr_storage	 bound;
	socklen_t		 blen = sizeof bound;
	char			*want;

	l = evconnlistener_new_bind(base, cb, arg, LEV_OPT_CLOSE_ON_FREE |
	    LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_EXEC, 128,
	    (const struct sockaddr *)ss, (int)len);
	if (l == NULL) {
		want = net_addr_origin((const struct sockaddr *)ss);
		xasprintf(cause, "cannot listen on %s: %s", want + 7,
		    strerror(errno));
		free(want);
		return NULL;
	}
	if (getsockname(evconnlistener_get_fd(l), (struct sockaddr *)&bound,
	    &blen) != 0) {
		xasprintf(cause, "cannot read the listening address: %s",
		    strerror(errno));
		evconnlistener_free(l);
		return NULL;
	}
	*origin = net_addr_origin((struct sockaddr *)&bound);
	return l;
}

/*
 * Ready an upstream: parse its URL, resolve its host (once, now), and for
 * https set up TLS that verifies the server against the system's CAs or
 * cacert, unless insecure.
 */
int
net_upstream_init(struct upstream *up, const char *url, const char *cacert,
    int insecure, char **cause)
{
	struct addrinfo	 hints;
	int		 rc;

	memset(up, 0, sizeof *up);
	if (net_parse_url(url, &up->url, cause) != 0)
		return -1;
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	rc = getaddrinfo(up->url.host, up->url.port, &hints, &up->ai);
	if (rc != 0) {
		xasprintf(cause, "cannot resolve upstream host '%s': %s",
		    up->url.host, gai_strerror(rc));
		goto fail;
	}
	if (!up->url.tls) {
		if (cacert != NULL || insecure)
			log_warnx("--cacert and --insecure only matter for an "
			    "https:// upstream");
		return 0;
	}
	up->ssl = SSL_CTX_new(TLS_client_method());
	if (up->ssl == NULL) {
		xasprintf(cause, "cannot set up TLS: %s",
		    ERR_error_string(ERR_get_error(), NULL));
		goto fail;
	}
	if (insecure)
		SSL_CTX_set_verify(up->ssl, SSL_VERIFY_NONE, NULL);
	else {
		SSL_CTX_set_verify(up->ssl, SSL_VERIFY_PEER, NULL);
		if (cacert != NULL) {
			if (SSL_CTX_load_verify_locations(up->ssl, cacert,
			    NULL) != 1) {
				xasprintf(cause, "cannot load CA certificates "
				    "from %s: %s", cacert, ERR_error_string(
				    ERR_get_error(), NULL));
				goto fail;
			}
		} else if (SSL_CTX_set_default_verify_paths(up->ssl) != 1) {
			xasprintf(cause, "cannot load the system's CA "
			    "certificates: %s", ERR_error_string(
			    ERR_get_error(), NULL));
			goto fail;
		}
	}
	up->insecure = insecure;
	return 0;
fail:
	net_upstream_clear(up);
	return -1;
}

void
net_upstream_clear(struct upstream *up)
{
	if (up->ai != NULL)
		freeaddrinfo(up->ai);
	if (up->ssl != NULL)
		SSL_CTX_free(up->ssl);
	net_url_clear(&up->url);
	memset(up, 0, sizeof *up);
}

/*
 * Start connecting to the upstream; BEV_EVENT_CONNECTED (after the TLS
 * handshake, for https) or an error arrives on the bufferevent's event
 * callback.  Returns NULL with cause when it cannot even start.
 */
struct bufferevent *
net_upstream_connect(struct event_base *base, struct upstream *up,
    char **cause)
{
	struct bufferevent	*bev;
	SSL			*ssl;
	int			 one = 1;

	if (up->ssl == NULL)
		bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
	else {
		if ((ssl = SSL_new(up->ssl)) == NULL) {
			xasprintf(cause, "cannot start TLS: %s",
			    ERR_error_string(ERR_get_error(), NULL));
			return NULL;
		}
		/* SNI, and the name the certificate must carry. */
		SSL_set_tlsext_host_name(ssl, up->url.host);
		if (!up->insecure) {
			X509_VERIFY_PARAM	*vp = SSL_get0_param(ssl);

			X509_VERIFY_PARAM_set_hostflags(vp,
			    X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
			if (X509_VERIFY_PARAM_set1_ip_asc(vp,
			    up->url.host) != 1)
				SSL_set1_host(ssl, up->url.host);
		}
		bev = bufferevent_openssl_socket_new(base, -1, ssl,
		    BUFFEREVENT_SSL_CONNECTING, BEV_OPT_CLOSE_ON_FREE |
		    BEV_OPT_DEFER_CALLBACKS);
		/*
		 * Many servers close without a TLS close_notify: that is the
		 * end of the stream (a close-delimited body is then whole),
		 * not an error.
		 */
		if (bev != NULL)
			bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
	}
	if (bev == NULL) {
		xasprintf(cause, "cannot create a connection to %s",
		    up->url.origin);
		return NULL;
	}
	if (bufferevent_socket_connect(bev, up->ai->ai_addr,
	    (int)up->ai->ai_addrlen) != 0) {
		xasprintf(cause, "cannot connect to %s: %s", up->url.origin,
		    strerror(errno));
		bufferevent_free(bev);
		return NULL;
	}
	/*
	 * libevent makes the socket without close-on-exec; a server child
	 * started later must not hold our upstream connection open.  One
	 * thread makes sockets and forks, so there is no window between.
	 */
	evutil_make_socket_closeonexec(bufferevent_getfd(bev));
	setsockopt(bufferevent_getfd(bev), IPPROTO_TCP, TCP_NODELAY, &one,
	    sizeof one);
	return bev;
}

/* Why a connection to the upstream failed, in words (caller frees). */
char *
net_upstream_error(struct bufferevent *bev, const struct upstream *up)
{
	unsigned long	 e;
	char		*s, buf[256];
	int		 err = EVUTIL_SOCKET_ERROR();

	if (up->ssl != NULL && (e = bufferevent_get_openssl_error(bev)) != 0) {
		ERR_error_string_n(e, buf, sizeof buf);
		if (ERR_GET_REASON(e) == SSL_R_CERTIFICATE_VERIFY_FAILED)
			xasprintf(&s, "TLS with %s failed: certificate "
			    "verification failed (%s); give --cacert FILE "
			    "with its CA, or --insecure", up->url.origin, buf);
		else
			xasprintf(&s, "TLS with %s failed: %s",
			    up->url.origin, buf);
		return s;
	}
	if (err != 0)
		xasprintf(&s, "cannot reach %s: %s", up->url.origin,
		    evutil_socket_error_to_string(err));
	else
		xasprintf(&s, "the connection to %s closed", up->url.origin);
	return s;
}
