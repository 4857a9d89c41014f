"""Job kinds: how long a job takes on n cards of a GPU over a fabric, and the candidates it is quoted at."""
