"""Plugin hosts: the only code that knows a trainer's internals. :mod:`.easyr1` is EasyR1's."""
