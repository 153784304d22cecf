"""Two plugins written for the selection corpus: `home_pack` (English) and `office_pack`
(Chinese descriptions). Their handlers answer with canned text: only their tool
declarations matter to selection."""
