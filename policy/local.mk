# policy/: see DESIGN.md section 2
