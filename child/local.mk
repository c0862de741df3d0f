# child/: what every child process runs at start, whichever its role:
# the fds it is handed, the policy it loads from fd 3, its confinement in
# docs/design.md section 1's order, and the test build's hooks.  Compiled
# into each of the three programs (sp uses the contract and the hooks);
# it may use policy/ and common/, never broker/.
CHILD_SOURCES = \
	child/child.c child/child.h \
	child/test_hook.c child/test_hook.h
