"""topics: see DESIGN.md section 2."""
