package pixelle
