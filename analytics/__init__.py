"""analytics: see DESIGN.md section 2."""
