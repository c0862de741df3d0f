# frontend/: see DESIGN.md section 2
