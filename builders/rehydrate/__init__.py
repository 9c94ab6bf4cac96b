"""``clincorp rehydrate``: a text-free release restored from the user's own copies of its sources, byte for
byte, leaving out the records whose documents differ, or re-anchored."""
