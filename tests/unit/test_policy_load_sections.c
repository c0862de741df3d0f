/*
 * policy_load(): targets, credentials, top-level settings, profiles, the
 * catalog pin, several problems at once and hostile text in messages.
 */
#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "policy/catalog.h"
#include "tests/unit/policy_load_expect.h"

Test(load_targets, https_unless_loopback)
{
	struct policy *p;

	expect_only(HEAD "\"targets\": {\"api\": {\"type\": \"http\", "
	    "\"base_url\": \"http://api.example.com\"}}}", "\"http://",
	    "targets.api.base_url: uses http:// for a host that is not "
	    "loopback; use https://");
	expect_only(HEAD "\"targets\": {\"api\": {\"type\": \"http\", "
	    "\"base_url\": \"http://128.0.0.1\"}}}", "\"http://",
	    "targets.api.base_url: uses http:// for a host that is not "
	    "loopback; use https://");
	p = load_ok(HEAD "\"targets\": {\"a\": {\"type\": \"http\", \"base_url\": "
	    "\"http://127.9.0.1:8080/v1/\"}, \"b\": {\"type\": \"http\", "
	    "\"base_url\": \"http://[::1]\"}, \"c\": {\"type\": \"http\", "
	    "\"base_url\": \"http://localhost\"}, \"d\": {\"type\": \"http\", "
	    "\"base_url\": \"https://api.example.com\"}}}");
	cr_assert_str_eq(p->targets[0].host, "127.9.0.1");
	cr_assert_eq(p->targets[0].port, 8080);
	cr_assert_str_eq(p->targets[0].base_path, "/v1");
	cr_assert(p->targets[0].allow_loopback);
	cr_assert_str_eq(p->targets[1].host, "::1");
	cr_assert_eq(p->targets[1].port, 80);
	cr_assert_str_eq(p->targets[2].scheme, "http");
	cr_assert_eq(p->targets[3].port, 443);
	cr_assert_not(p->targets[3].allow_loopback);
	policy_free(p);
}

Test(load_targets, base_url_has_no_userinfo_query_fragment)
{
	expect_only(HEAD "\"targets\": {\"api\": {\"type\": \"http\", "
	    "\"base_url\": \"https://u:p@api.example.com\"}}}", "\"https://",
	    "targets.api.base_url: must not hold user information (put secrets "
	    "in a credential)");
	expect_only(HEAD "\"targets\": {\"api\": {\"type\": \"http\", "
	    "\"base_url\": \"https://api.example.com/x?a=1\"}}}", "\"https://",
	    "targets.api.base_url: must not have a query or a fragment");
	expect_only(HEAD "\"targets\": {\"api\": {\"type\": \"http\", "
	    "\"base_url\": \"https://api.example.com#f\"}}}", "\"https://",
	    "targets.api.base_url: must not have a query or a fragment");
	expect_only(HEAD "\"targets\": {\"api\": {\"type\": \"http\", "
	    "\"base_url\": \"https://api.example.com:70000\"}}}", "\"https://",
	    "targets.api.base_url: has a bad port (1 to 65535)");
	expect_only(HEAD "\"targets\": {\"api\": {\"type\": \"http\", "
	    "\"base_url\": \"ftp://api.example.com\"}}}", "\"ftp://",
	    "targets.api.base_url: must start with https:// (or http:// for a "
	    "loopback host)");
	expect_only(HEAD "\"targets\": {\"api\": {\"type\": \"http\", "
	    "\"base_url\": \"https://api.example.com/a/../b\"}}}", "\"https://",
	    "targets.api.base_url: has a '.' or '..' segment");
}


Test(load_targets, ssh_host_key_required_in_one_form)
{
	struct policy *p;

	expect_only(SSH_HEAD "}}}", "{\"type\": \"ssh\"", "targets.web: an ssh "
	    "target needs \"known_hosts\" or \"host_key_sha256\": host keys are "
	    "always verified");
	expect_only(SSH_HEAD ", \"known_hosts\": \"/kh\", \"host_key_sha256\": "
	    "\"SHA256:x\"}}}", "\"host_key_sha256\"", "targets.web: give "
	    "\"known_hosts\" or \"host_key_sha256\", not both");
	expect_only(SSH_HEAD ", \"host_key_sha256\": \"SHA256:abc\"}}}",
	    "\"SHA256:abc\"", "targets.web.host_key_sha256: must be \"SHA256:\" "
	    "and 43 base64 characters (as ssh-keygen -l prints) or 64 hex digits");
	/* 43 characters whose last one carries bits past the 32 bytes. */
	expect_only(SSH_HEAD ", \"host_key_sha256\": "
	    "\"SHA256:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa1\"}}}",
	    "\"SHA256:ung", "targets.web.host_key_sha256: must be \"SHA256:\" "
	    "and 43 base64 characters (as ssh-keygen -l prints) or 64 hex digits");
	expect_only(SSH_HEAD ", \"known_hosts\": \"/kh\", "
	    "\"strict_host_key_checking\": false}}}", "\"strict_host_key_checking\"",
	    "targets.web: unknown key \"strict_host_key_checking\"");
	/* The OpenSSH form and hex name the same digest. */
	p = load_ok(SSH_HEAD ", \"host_key_sha256\": "
	    "\"SHA256:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0\"}, "
	    "\"w2\": {\"type\": \"ssh\", \"host\": \"10.0.0.2\", \"user\": \"ops\", "
	    "\"credential\": \"k\", \"host_key_sha256\": "
	    "\"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\"}}}");
	cr_assert(p->targets[0].has_host_key_sha256);
	cr_assert_eq(memcmp(p->targets[0].host_key_sha256,
	    p->targets[1].host_key_sha256, 32), 0);
	cr_assert_eq(p->targets[0].port, 22);
	policy_free(p);
}

Test(load_credentials, types_and_their_keys)
{
	expect_only(HEAD "\"credentials\": {\"c\": {\"type\": \"token\", "
	    "\"file\": \"/f\"}}}", "\"token\"", "credentials.c.type: unknown "
	    "credential type \"token\" (bearer, basic, header, ssh-key)");
	expect_only(HEAD "\"credentials\": {\"c\": {\"type\": \"header\", "
	    "\"file\": \"/f\"}}}", "{\"type\": \"header\"",
	    "credentials.c: missing \"header_name\"");
	expect_only(HEAD "\"credentials\": {\"c\": {\"type\": \"header\", "
	    "\"file\": \"/f\", \"header_name\": \"X Key\"}}}", "\"X Key\"",
	    "credentials.c.header_name: must be an HTTP header name other than "
	    "Host, Content-Length, Transfer-Encoding, Connection, Authorization");
	expect_only(HEAD "\"credentials\": {\"c\": {\"type\": \"bearer\", "
	    "\"file\": \"/f\", \"private_key\": \"/k\"}}}", "\"private_key\"",
	    "credentials.c: \"private_key\" does not apply to a credential of "
	    "type bearer");
	expect_only(HEAD "\"credentials\": {\"c\": {\"type\": \"basic\", "
	    "\"file\": \"f\"}}}", "\"f\"", "credentials.c.file: must be an "
	    "absolute path");
}

Test(load_credentials, target_needs_a_fitting_type)
{
	expect_only(HEAD "\"credentials\": {\"b\": {\"type\": \"bearer\", "
	    "\"file\": \"/f\"}},\n\"targets\": {\"web\": {\"type\": \"ssh\", "
	    "\"host\": \"h\", \"user\": \"ops\", \"known_hosts\": \"/kh\", "
	    "\"credential\": \"b\"}}}", "\"b\"}}}", "targets.web.credential: "
	    "credential \"b\" is of type bearer; an ssh target needs an ssh-key");
}

Test(load_top, limits_server_and_pin)
{
	expect_only("{\"sallyport\": 1, \"limits\": {\"max_inflight\": 0}}", "0}",
	    "limits.max_inflight: must be between 1 and 256");
	expect_only("{\"sallyport\": 1, \"limits\": {\"call_timeout_ms\": "
	    "600001}}", "600001", "limits.call_timeout_ms: must be between 100 "
	    "and 600000");
	expect_only("{\"sallyport\": 1, \"limits\": {\"result_max_chars\": "
	    "16385}}", "16385", "limits.result_max_chars: must be between 1024 "
	    "and 16384");
	expect_only("{\"sallyport\": 1, \"server\": {\"on_invalid\": \"drop\"}}",
	    "\"drop\"", "server.on_invalid: must be \"close\" or \"reject\"");
	expect_only("{\"sallyport\": 1, \"server\": {\"sandbox\": \"off\"}}",
	    "\"off\"", "server.sandbox: must be \"required\" or \"best-effort\"");
	expect_only("{\"sallyport\": 1, \"catalog_sha256\": \"abc\"}", "\"abc\"",
	    "catalog_sha256: must be 64 hexadecimal digits (the fingerprint "
	    "printed by sp catalog)");
}

Test(load_top, settings_reach_the_struct)
{
	struct policy *p = load_ok("{\"sallyport\": 1, \"server\": {\"name\": "
	    "\"gw\", \"on_invalid\": \"reject\", \"sandbox\": \"best-effort\"}, "
	    "\"limits\": {\"max_inflight\": 3, \"call_timeout_ms\": 2500}}");

	cr_assert_str_eq(p->server_name, "gw");
	cr_assert_eq(p->on_invalid, POLICY_ON_INVALID_REJECT);
	cr_assert_eq(p->sandbox, POLICY_SANDBOX_BEST_EFFORT);
	cr_assert_eq(p->limits.max_inflight, 3);
	cr_assert_eq(p->limits.call_timeout_ms, 2500);
	cr_assert_eq(p->limits.calls_per_session, 200);
	cr_assert_not(p->has_catalog_pin);
	policy_free(p);
}

Test(load_profiles, scopes_and_match)
{
	struct policy *p;

	expect_only("{\"sallyport\": 1, \"profiles\": {\"p\": {\"scopes\": "
	    "[\"read\", \"*\"]}}}", "\"*\"", "profiles.p.scopes[1]: \"*\": there "
	    "is no wildcard scope; list each scope");
	expect_only("{\"sallyport\": 1, \"profiles\": {\"p\": {\"scopes\": [], "
	    "\"match\": {\"uid\": [-1]}}}}", "-1", "profiles.p.match.uid[0]: must "
	    "be between 0 and 4294967294");
	p = load_ok("{\"sallyport\": 1, \"profiles\": {\"none\": {\"scopes\": []},"
	    " \"ops\": {\"scopes\": [\"read\", \"write\"], \"match\": {\"uid\": "
	    "[1001, 0], \"gid\": [7]}}}}");
	cr_assert_eq(p->profile_count, 2);
	cr_assert_eq(p->profiles[0].scope_count, 0);
	cr_assert_eq(p->profiles[1].scope_count, 2);
	cr_assert_eq(p->profiles[1].match_uid_count, 2);
	cr_assert_eq(p->profiles[1].match_uids[0], 1001);
	cr_assert_eq(p->profiles[1].match_gids[0], 7);
	policy_free(p);
}

/* One uid or gid in two profiles would let the file's order decide. */
Test(load_profiles, one_profile_per_uid_and_per_gid)
{
	struct policy *p;

	expect_only("{\"sallyport\": 1, \"profiles\": {\"ops\": {\"scopes\": "
	    "[\"admin\"], \"match\": {\"uid\": [7, 1001]}},\n \"ro\": "
	    "{\"scopes\": [], \"match\": {\"uid\": [1001]}}}}", "1001]}}}",
	    "profiles.ro.match.uid[0]: uid 1001 is already matched by profile "
	    "\"ops\"; a client must have one profile");
	expect_only("{\"sallyport\": 1, \"profiles\": {\"a\": {\"scopes\": "
	    "[], \"match\": {\"gid\": [50]}}, \"b\": {\"scopes\": [], "
	    "\"match\": {\"uid\": [3], \"gid\": [4, 50]}}}}", "50]}}}}",
	    "profiles.b.match.gid[1]: gid 50 is already matched by profile "
	    "\"a\"; a client must have one profile");
	expect_only("{\"sallyport\": 1, \"profiles\": {\"a\": {\"scopes\": "
	    "[], \"match\": {\"gid\": [9, 9]}}}}", "9]}}}}",
	    "profiles.a.match.gid[1]: gid 9 is already matched by profile "
	    "\"a\"; a client must have one profile");
	expect_only("{\"sallyport\": 1, \"profiles\": {\"a\": {\"scopes\": "
	    "[], \"match\": {\"uid\": []}}}}", "{\"uid\"",
	    "profiles.a.match: must list at least one uid or gid");
	/* The same number as a uid in one profile and a gid in another. */
	p = load_ok("{\"sallyport\": 1, \"profiles\": {\"a\": {\"scopes\": "
	    "[], \"match\": {\"uid\": [1001]}}, \"b\": {\"scopes\": [], "
	    "\"match\": {\"gid\": [1001]}}}}");
	cr_assert_eq(p->profiles[1].match_gids[0], 1001);
	policy_free(p);
}

Test(load_all, every_problem_is_reported)
{
	const char *text = "{\"sallyport\": 1, \"x\": 1,\n"
	    "\"server\": {\"sandbox\": \"no\"},\n"
	    "\"targets\": {\"api\": {\"type\": \"http\", \"base_url\": "
	    "\"http://example.com\"}},\n"
	    "\"tools\": [{\"name\": \"T\", \"description\": \"d\", \"target\": "
	    "\"api\", \"scope\": \"r\", \"http\": {\"method\": \"GET\", "
	    "\"path\": \"/{nope}\"}}],\n"
	    "\"profiles\": {\"p\": {\"scopes\": [\"*\"]}}}";
	struct policy_diags d = { 0 };
	struct policy *p = policy_load("t.json", text, strlen(text), &d);
	char *all = diags_joined(&d);

	cr_assert_null(p);
	cr_assert_eq(d.count, 6, "got:\n%s", all);
	cr_assert_eq(d.errors, 6);
	cr_assert(strstr(all, "t.json:1:18: unknown key \"x\"\n"), "%s", all);
	cr_assert(strstr(all, "t.json:2:23: server.sandbox:"), "%s", all);
	cr_assert(strstr(all, "t.json:3:49: targets.api.base_url:"), "%s", all);
	cr_assert(strstr(all, "t.json:4:20: tools[0].name:"), "%s", all);
	cr_assert(strstr(all, "t.json:4:110: tools[0].http.path:"), "%s", all);
	cr_assert(strstr(all, "t.json:5:31: profiles.p.scopes[0]:"), "%s", all);
	free(all);
	policy_diags_free(&d);
}

/* Quotes, newlines, $() and multibyte text stay inside one line. */
Test(load_all, hostile_values_keep_messages_on_one_line)
{
	const char *text = "{\"sallyport\": 1, \"a\\n\\\"b$(id)\\u001b[31m\xe2\x80\xae"
	    "\xc3\xa9\": 1}";
	struct policy_diags d = { 0 };
	struct policy *p = policy_load("dir/\nx.json", text, strlen(text), &d);
	const char *s;

	cr_assert_null(p);
	cr_assert_eq(d.count, 1);
	for (s = d.items[0].text; *s != '\0'; s++)
		cr_assert((unsigned char)*s >= 0x20 && *s != 0x7f,
		    "control character in %s", d.items[0].text);
	cr_assert_str_eq(d.items[0].text, "dir/?x.json:1:18: unknown key "
	    "\"a\\n\\\"b$(id)\\u001b[31m\\u202e\xc3\xa9\"");
	policy_diags_free(&d);
}

Test(load_all, design_example_loads_into_the_model)
{
	FILE *f;
	char path[4096], *text;
	long n;
	struct policy *p;
	const struct policy_tool *t;

	snprintf(path, sizeof(path), "%s/contrib/examples/design.json",
	    getenv("SP_SRCDIR") ? getenv("SP_SRCDIR") : ".");
	cr_assert_not_null(f = fopen(path, "r"), "%s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	text = calloc(1, (size_t)n + 1);
	cr_assert_eq(fread(text, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	p = load_ok(text);
	cr_assert_eq(p->tool_count, 3);
	cr_assert_eq(p->target_count, 2);
	cr_assert_eq(p->secret_file_count, 2);
	t = &p->tools[1];
	cr_assert_str_eq(t->name, "create_item");
	cr_assert(t->mutating && !t->confirm);
	cr_assert_eq(t->http.body->kind, BODY_OBJECT);
	cr_assert_eq(t->http.body->child_count, 2);
	cr_assert_str_eq(t->http.body->children[1].key, "qty");
	cr_assert_eq(t->http.body->children[1].string.part_count, 1);
	cr_assert(t->http.body->children[1].string.parts[0].is_param);
	t = &p->tools[2];
	cr_assert_eq(t->kind, TOOL_SSH);
	cr_assert_eq(t->ssh.argc, 3);
	cr_assert_eq(t->params[0].enum_count, 2);
	cr_assert_eq(p->targets[p->tools[2].target_index].type, TARGET_SSH);
	policy_free(p);
	free(text);
}

/* One http tool with the given description, pinned when pin is not "". */
static void
pinned_policy(char *buf, size_t size, const char *pin, const char *description)
{
	snprintf(buf, size, HEAD "%s%s%s" T_HTTP "\"tools\": [{\"name\": \"t\", "
	    "\"description\": \"%s\", \"target\": \"api\", \"scope\": "
	    "\"read\", \"http\": {\"method\": \"GET\", \"path\": \"/\"}}]}",
	    pin[0] ? "\"catalog_sha256\": \"" : "", pin, pin[0] ? "\",\n" : "",
	    description);
}

/* A pin of the catalog as loaded passes; one changed description breaks it. */
Test(load_top, catalog_pin_must_match)
{
	char text[2048], hex[HASH_SHA256_HEX_LEN + 1], want[512];
	uint8_t fp[HASH_SHA256_LEN];
	struct policy_diags d = { 0 };
	struct policy *p;

	pinned_policy(text, sizeof(text), "", "Read it.");
	p = load_ok(text);
	cr_assert(policy_catalog_fingerprint(p, fp));
	policy_free(p);
	hash_hex(fp, sizeof(fp), hex);
	pinned_policy(text, sizeof(text), hex, "Read it.");
	p = load_ok(text);
	cr_assert(p->has_catalog_pin);
	cr_assert_eq(memcmp(p->catalog_pin, fp, sizeof(fp)), 0);
	cr_assert(policy_check_catalog_pin(p, "t.json", &d));
	cr_assert_eq(d.count, 0);
	policy_free(p);
	pinned_policy(text, sizeof(text), hex, "Read it, then delete it.");
	snprintf(want, sizeof(want), "t.json:2:19: catalog_sha256 is %s but "
	    "the catalog's fingerprint is ", hex);
	p = load_ok(text);
	cr_assert_not(policy_check_catalog_pin(p, "t.json", &d));
	policy_free(p);
	cr_assert_eq(d.count, 1);
	cr_assert(strncmp(d.items[0].text, want, strlen(want)) == 0, "%s",
	    d.items[0].text);
	policy_diags_free(&d);
}

Test(load_top, server_audit_and_paths)
{
	expect_only("{\"sallyport\": 1, \"server\": {\"name\": \"ops gw\"}}",
	    "\"ops gw\"", "server.name: must match "
	    "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$");
	expect_only("{\"sallyport\": 1, \"server\": {\"run_as\": \"Root;id\"}}",
	    "\"Root;id\"", "server.run_as: must be a user name matching "
	    "^[a-z_][a-z0-9_-]{0,31}$");
	expect_only("{\"sallyport\": 1, \"audit\": {\"key_file\": \"/k\"}}",
	    "{\"key_file\"", "audit: missing \"path\"");
	expect_only("{\"sallyport\": 1, \"state_dir\": \"var/lib/sp\"}",
	    "\"var/lib/sp\"", "state_dir: must be an absolute path");
	expect_only("{\"sallyport\": 1, \"strict_credentials\": \"yes\"}",
	    "\"yes\"", "strict_credentials: must be true or false");
	expect_only("{\"sallyport\": 1, \"profiles\": {\"Ops Team\": "
	    "{\"scopes\": []}}}", "\"Ops Team\"", "profiles: bad profile name "
	    "\"Ops Team\" (want ^[a-z0-9][a-z0-9_.-]{0,63}$)");
}

/* A hostile member name inside the path is quoted, escaped and cut. */
Test(load_all, hostile_key_in_a_path_is_quoted)
{
	const char *text = "{\"sallyport\": 1, \"credentials\": {"
	    "\"x\\\"$(id)\\n`y`%2e%2e\xe2\x80\xae\xf0\x9f\x98\x80"
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\": "
	    "{\"type\": \"tok\"}}}";
	struct policy_diags d = { 0 };

	cr_assert_null(policy_load("t.json", text, strlen(text), &d));
	cr_assert_eq(d.count, 2, "%s", d.count ? d.items[0].text : "");
	cr_assert_str_eq(d.items[1].text, "t.json:1:120: credentials[\"x\\\"$(id)"
	    "\\n`y`%2e%2e\\u202e\xf0\x9f\x98\x80" "aaaaaaaaaaaaaaaaaaaaaaaaaaaaa..."
	    "\"].type: unknown credential type \"tok\" (bearer, basic, header, "
	    "ssh-key)");
	policy_diags_free(&d);
}
