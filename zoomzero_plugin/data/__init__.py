"""Dataset converters, validation, offline filtering and SFT export."""
