"""Statistics: Elo, LOS and SPRT from pentanomial deal-set scores, and
maximum-likelihood ratings from placements. Pure math; imports only `referee.errors`."""
