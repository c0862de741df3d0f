# the frontend end to end: hostile lines, noise, backpressure, the SDK
# client, the sanitizer and cancellation through the real sp mcp
FRONT_TESTS = tests/integration/front_hostile.py \
	tests/integration/front_backpressure.py \
	tests/sdk/sdk_client.mjs \
	tests/integration/front_demo.py \
	tests/integration/front_results.py
TESTS += $(FRONT_TESTS)
EXTRA_DIST += $(FRONT_TESTS) tests/integration/front_lib.py \
	tests/integration/front_target.py
EXTRA_DIST += tests/sdk/package.json tests/sdk/package-lock.json
EXTRA_DIST += contrib/examples/demo.json
