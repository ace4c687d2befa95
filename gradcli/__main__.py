"""`python -m gradcli` works like the gradcli command."""
from .cli import main

main()
