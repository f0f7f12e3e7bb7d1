"""The arena: a competition run as a service. Competitors submit bots at any
time; the arena keeps them (users, submissions, versions), unpacks and builds
them in the sandbox, checks them, plays them against the field in duplicate
units and rates them continuously (docs/arena.md).

It may import every wing below the CLI except the person's seats (`human`,
`web`) and the live view; only the CLI imports it.
"""
