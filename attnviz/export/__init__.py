"""Figures for lectures: render views off-screen to PNG/SVG/PDF (Qt)."""
