# executor/: see DESIGN.md section 2
# the executor role's entry: record checks and dispatch
EXECUTOR_MAIN_SOURCES = \
	executor/executor.h executor/main.c
