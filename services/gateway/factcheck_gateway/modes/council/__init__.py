"""Council mode (MODE_COUNCIL): several models answer, every fact-checker rates every
anonymised answer, and the answers are ranked with an error taxonomy."""
