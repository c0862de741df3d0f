/*
 * Test support for the HTTP engine's tests: a real HTTP server process.
 */
#include "config.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/unit/http_peer.h"

static const char *
script_path(char *buf, size_t size)
{
	const char *src = getenv("SP_SRCDIR");

	if (src == NULL || *src == '\0')
		src = SP_TEST_SRCDIR;
	snprintf(buf, size, "%s/tests/integration/http_target.py", src);
	return buf;
}

static bool
read_port(int fd, uint16_t *port)
{
	char line[32];
	size_t len = 0;
	struct pollfd pfd = { fd, POLLIN, 0 };

	while (len < sizeof(line) - 1) {
		ssize_t n;

		if (poll(&pfd, 1, 5000) != 1)
			return false;
		if ((n = read(fd, line + len, 1)) != 1)
			return false;
		if (line[len] == '\n')
			break;
		len++;
	}
	line[len] = '\0';
	*port = (uint16_t)strtoul(line, NULL, 10);
	return *port != 0;
}

static bool
peer_start(struct http_peer *p, bool tls)
{
	char script[4096];
	int fds[2];

	memset(p, 0, sizeof(*p));
	snprintf(p->dir, sizeof(p->dir), "/tmp/sp-http-test-XXXXXX");
	if (mkdtemp(p->dir) == NULL || pipe2(fds, O_CLOEXEC) == -1)
		return false;
	snprintf(p->log_path, sizeof(p->log_path), "%s/requests.log", p->dir);
	script_path(script, sizeof(script));
	if ((p->pid = fork()) == -1)
		return false;
	if (p->pid == 0) {
		dup2(fds[1], STDOUT_FILENO);
		if (tls)
			execlp("python3", "python3", script, "--log",
			    p->log_path, "--lifetime", "60", "--tls", p->dir,
			    (char *)NULL);
		else
			execlp("python3", "python3", script, "--log",
			    p->log_path, "--lifetime", "60", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	if (!read_port(fds[0], &p->port)) {
		close(fds[0]);
		http_peer_stop(p);
		return false;
	}
	close(fds[0]);
	if (tls)
		snprintf(p->cert_path, sizeof(p->cert_path), "%s/cert.pem",
		    p->dir);
	return true;
}

bool
http_peer_start(struct http_peer *p)
{
	return peer_start(p, false);
}

bool
http_peer_start_tls(struct http_peer *p)
{
	return peer_start(p, true);
}

void
http_peer_stop(struct http_peer *p)
{
	if (p->pid > 0) {
		kill(p->pid, SIGKILL);
		waitpid(p->pid, NULL, 0);
		p->pid = 0;
	}
	if (p->log_path[0] != '\0')
		unlink(p->log_path);
	if (p->dir[0] != '\0') {
		char path[128];

		snprintf(path, sizeof(path), "%s/cert.pem", p->dir);
		unlink(path);
		snprintf(path, sizeof(path), "%s/key.pem", p->dir);
		unlink(path);
	}
	if (p->dir[0] != '\0')
		rmdir(p->dir);
}

cJSON *
http_peer_log(const struct http_peer *p)
{
	cJSON *all = cJSON_CreateArray();
	char *line = NULL;
	size_t cap = 0;
	FILE *f;

	if ((f = fopen(p->log_path, "r")) == NULL)
		return all;
	while (getline(&line, &cap, f) > 0) {
		cJSON *req = cJSON_Parse(line);

		if (req != NULL)
			cJSON_AddItemToArray(all, req);
	}
	free(line);
	fclose(f);
	return all;
}

int
http_peer_requests(const struct http_peer *p)
{
	cJSON *all = http_peer_log(p);
	int n = cJSON_GetArraySize(all);

	cJSON_Delete(all);
	return n;
}

const char *
http_peer_header(const cJSON *request, const char *name)
{
	const cJSON *h, *headers;

	headers = cJSON_GetObjectItemCaseSensitive(request, "headers");
	cJSON_ArrayForEach(h, headers) {
		const cJSON *k = cJSON_GetArrayItem(h, 0);
		const cJSON *v = cJSON_GetArrayItem(h, 1);

		if (cJSON_IsString(k) && cJSON_IsString(v) &&
		    strcasecmp(k->valuestring, name) == 0)
			return v->valuestring;
	}
	return NULL;
}

uint16_t
http_peer_closed_port(void)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	int s = socket(AF_INET, SOCK_STREAM, 0);
	uint16_t port = 0;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s != -1 && bind(s, (struct sockaddr *)&sin, sizeof(sin)) == 0 &&
	    getsockname(s, (struct sockaddr *)&sin, &len) == 0)
		port = ntohs(sin.sin_port);
	if (s != -1)
		close(s);
	return port;
}
