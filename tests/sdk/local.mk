# The official MCP SDK clients (npm, tests/sdk/package.json: the 1.32.x
# client and the 2.4.x client for the 2026-07-28 revision) against the
# real sp mcp; `contrib/bootstrap check` installs them with `npm ci`.
# Without them each test is a counted TAP skip.
SDK_TESTS = tests/sdk/sdk_client.mjs tests/sdk/sdk_interop.mjs \
	tests/sdk/sdk_v2.mjs tests/sdk/sdk_confirm.mjs
TESTS += $(SDK_TESTS)
EXTRA_DIST += $(SDK_TESTS) tests/sdk/sdk_lib.mjs \
	tests/sdk/package.json tests/sdk/package-lock.json
