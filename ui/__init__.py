"""The studio's screens. ``ui`` imports ``core``; ``core`` never imports ``ui`` or Streamlit."""
