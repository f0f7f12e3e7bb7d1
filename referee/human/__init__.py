"""The person at the table in a terminal: `terminal` shows each decision
(hand, scores, what happened, the legal choices) and reads typed choices.

It sits above `play` and `replay` (it borrows the replay's coloured cards)
and below `cli`, which hands it the console to write to and the lines typed;
it imports `protocol/`, `games`, `seats`, `logs`, `play` and `replay`."""
