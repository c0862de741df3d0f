/*
 * The 2026-07-28 revision of a session (docs/design.md section 5): no
 * initialize; each request names its protocol version and the client's
 * capabilities in _meta, so a modern session checks that envelope on
 * every request before anything else; server/discover says what
 * initialize would have said.  Decisions are listed in
 * frontend/mcp_session.h.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "frontend/mcp_session_impl.h"

#define MCP_META_VERSION "io.modelcontextprotocol/protocolVersion"
#define MCP_META_CAPABILITIES "io.modelcontextprotocol/clientCapabilities"
#define MCP_META_SERVER_INFO "io.modelcontextprotocol/serverInfo"
#define MCP_UNSUPPORTED_VERSION -32022
/* Longer than any revision name: refused as malformed, not echoed. */
#define MCP_VERSION_TEXT_MAX 32
/*
 * The catalog is fixed for the session and depends on the profile,
 * chosen by who the client is: cacheable for long, by this caller only.
 */
#define MCP_CATALOG_TTL_MS "3600000"
#define MCP_CACHE_SCOPE "private"

/* What server/discover offers; initialize still answers the legacy two. */
static const char *const mcp_supported_versions[] = {
	MCP_VERSION_MODERN, MCP_VERSION_LATEST, MCP_VERSION_PREVIOUS,
};

static const cJSON *
mcp_modern_meta(const struct jsonrpc_message *msg)
{
	if (!cJSON_IsObject(msg->params))
		return NULL;
	return cJSON_GetObjectItemCaseSensitive(msg->params, "_meta");
}

bool
mcp_modern_era_of(const struct jsonrpc_message *msg)
{
	if (strcmp(msg->method, "initialize") == 0)
		return false;
	return strcmp(msg->method, "server/discover") == 0 ||
	    cJSON_GetObjectItemCaseSensitive(mcp_modern_meta(msg),
	    MCP_META_VERSION) != NULL;
}

char *
mcp_modern_catalog(const char *catalog_json)
{
	char *text;

	/* catalog_json is policy_catalog_render()'s {"tools":[...]} */
	if (catalog_json[0] != '{' || asprintf(&text, "{\"resultType\":"
	    "\"complete\",\"ttlMs\":" MCP_CATALOG_TTL_MS ",\"cacheScope\":\""
	    MCP_CACHE_SCOPE "\",%s", catalog_json + 1) < 0)
		return NULL;
	return text;
}

/*
 * The versions server/discover offers, as member name of r: -32022 lists
 * the same ones, so a client told one is unsupported learns every
 * version it could use.
 */
static bool
mcp_modern_add_versions(cJSON *r, const char *name)
{
	cJSON *list = cJSON_AddArrayToObject(r, name);
	size_t i;

	for (i = 0; list != NULL && i < sizeof(mcp_supported_versions) /
	    sizeof(mcp_supported_versions[0]); i++)
		if (!cJSON_AddItemToArray(list,
		    cJSON_CreateString(mcp_supported_versions[i])))
			return false;
	return list != NULL;
}

/* -32022 with data {supported, requested} beside the issuer. */
static bool
mcp_modern_unsupported(struct mcp_session *s, const struct jsonrpc_id *id,
    const char *requested, struct mcp_output *out)
{
	cJSON *data = cJSON_CreateObject();
	char message[128];

	snprintf(message, sizeof(message), "Unsupported protocol version: "
	    "this server speaks %s in _meta (and %s or %s through "
	    "initialize)", MCP_VERSION_MODERN, MCP_VERSION_LATEST,
	    MCP_VERSION_PREVIOUS);
	if (data == NULL || !mcp_modern_add_versions(data, "supported") ||
	    cJSON_AddStringToObject(data, "requested", requested) == NULL) {
		log_error("out of memory");
		cJSON_Delete(data);
		return false;
	}
	return mcp_output_add_line(out, result_render_error_data(&s->render,
	    id, MCP_UNSUPPORTED_VERSION, message, data));
}

/*
 * The per-request envelope: true when the request may go on; otherwise
 * its error was appended (*ok false only on an internal error).
 */
static bool
mcp_modern_envelope(struct mcp_session *s, const struct jsonrpc_message *msg,
    struct mcp_output *out, bool *ok)
{
	const cJSON *meta = mcp_modern_meta(msg), *v, *caps;

	v = cJSON_GetObjectItemCaseSensitive(meta, MCP_META_VERSION);
	caps = cJSON_GetObjectItemCaseSensitive(meta, MCP_META_CAPABILITIES);
	if (!cJSON_IsString(v) || strlen(v->valuestring) >
	    MCP_VERSION_TEXT_MAX) {
		*ok = mcp_session_error(s, &msg->id, -32602, "Invalid params: "
		    "a " MCP_VERSION_MODERN " request carries _meta[\""
		    MCP_META_VERSION "\"], a protocol version", out);
		return false;
	}
	if (strcmp(v->valuestring, MCP_VERSION_MODERN) != 0) {
		*ok = mcp_modern_unsupported(s, &msg->id, v->valuestring, out);
		return false;
	}
	if (!cJSON_IsObject(caps)) {
		*ok = mcp_session_error(s, &msg->id, -32602, "Invalid params: "
		    "a " MCP_VERSION_MODERN " request carries _meta[\""
		    MCP_META_CAPABILITIES "\"], an object", out);
		return false;
	}
	return true;
}

/* What initialize says, as the revision shapes it; cacheable like the list. */
static bool
mcp_modern_discover(struct mcp_session *s, const struct mcp_frame *frame,
    const struct jsonrpc_message *msg, struct mcp_output *out)
{
	cJSON *r = cJSON_CreateObject(), *caps, *meta, *info;

	(void)frame;
	if (r == NULL ||
	    cJSON_AddStringToObject(r, "resultType", "complete") == NULL ||
	    cJSON_AddRawToObject(r, "ttlMs", MCP_CATALOG_TTL_MS) == NULL ||
	    cJSON_AddStringToObject(r, "cacheScope", MCP_CACHE_SCOPE) == NULL ||
	    !mcp_modern_add_versions(r, "supportedVersions") ||
	    (caps = cJSON_AddObjectToObject(r, "capabilities")) == NULL ||
	    (caps = cJSON_AddObjectToObject(caps, "tools")) == NULL ||
	    cJSON_AddFalseToObject(caps, "listChanged") == NULL ||
	    cJSON_AddStringToObject(r, "instructions", mcp_instructions) ==
	    NULL || (meta = cJSON_AddObjectToObject(r, "_meta")) == NULL ||
	    (info = cJSON_AddObjectToObject(meta, MCP_META_SERVER_INFO)) ==
	    NULL || cJSON_AddStringToObject(info, "name",
	    s->policy->server_name) == NULL ||
	    cJSON_AddStringToObject(info, "version", s->server_version) ==
	    NULL) {
		log_error("out of memory");
		cJSON_Delete(r);
		return false;
	}
	return mcp_output_add_line(out, result_render_success(&msg->id, r));
}

/*
 * The revision's methods.  initialize, ping and logging/setLevel are not
 * among them: the revision removed them, so they are -32601 like any
 * unknown method.
 */
static const struct mcp_modern_method {
	const char *name;
	bool (*handle)(struct mcp_session *, const struct mcp_frame *,
	    const struct jsonrpc_message *, struct mcp_output *);
} mcp_modern_methods[] = {
	{ "server/discover", mcp_modern_discover },
	{ "tools/list", mcp_session_tools_list },
	{ "tools/call", mcp_call_tools_call },
	{ NULL, NULL },
};

static bool
mcp_modern_removed(const char *method)
{
	return strcmp(method, "initialize") == 0 ||
	    strcmp(method, "ping") == 0 ||
	    strcmp(method, "logging/setLevel") == 0;
}

bool
mcp_modern_request(struct mcp_session *s, const struct mcp_frame *frame,
    const struct jsonrpc_message *msg, struct mcp_output *out)
{
	const struct mcp_modern_method *m;
	bool ok = true;

	for (m = mcp_modern_methods; m->name != NULL; m++)
		if (strcmp(m->name, msg->method) == 0)
			break;
	if (m->name == NULL)
		return mcp_session_error(s, &msg->id, -32601,
		    mcp_modern_removed(msg->method) ? "Method not found: "
		    MCP_VERSION_MODERN " removed it (this session began "
		    "without initialize)" : "Method not found", out);
	if (mcp_session_call_by_id(s, &msg->id) != NULL)
		return mcp_session_error(s, &msg->id, JSONRPC_INVALID_REQUEST,
		    "Invalid Request: this id is already in flight", out);
	if (!mcp_modern_envelope(s, msg, out, &ok))
		return ok;
	if (m->handle == mcp_call_tools_call && s->inflight >= s->call_slots &&
	    s->deferred == NULL)
		return mcp_session_defer(s, frame);
	return m->handle(s, frame, msg, out);
}
