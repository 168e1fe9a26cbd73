"""analytics: see DESIGN.md section 2 (filled in by later issues)."""
