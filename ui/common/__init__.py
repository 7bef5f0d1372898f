"""What every screen uses: who the visitor is, the session's state, the page chrome, texts, links, knobs."""
