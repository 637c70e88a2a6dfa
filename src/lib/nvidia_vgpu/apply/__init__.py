"""The apply side: each hook's collaborators read the host into the hook
context, carry out the part of its plan that is theirs, and tell the
context when they changed the host or the unit's records."""
