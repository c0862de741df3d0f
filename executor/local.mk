# executor/: see DESIGN.md section 2
