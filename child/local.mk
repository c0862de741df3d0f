# child/: what every child process runs at start, whichever its role:
# the fds it is handed, the policy it loads from fd 3, its confinement in
# docs/design.md section 1's order, and the test build's hooks.  Compiled
# into sp (the children are sp itself, exec'd with an internal role); it
# may use policy/ and common/, never broker/.
CHILD_SOURCES = \
	child/child.c child/child.h \
	child/test_hook.c child/test_hook.h
