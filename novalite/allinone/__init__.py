"""Running the real companion services beside novalite on one machine (all-in-one)."""
