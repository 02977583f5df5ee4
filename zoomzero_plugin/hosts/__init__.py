"""Plugin hosts: the only code that knows a trainer's internals."""
