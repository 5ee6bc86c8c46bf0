"""The dashboard's own helpers: cached wrappers around evalcore. No metric arithmetic here."""
