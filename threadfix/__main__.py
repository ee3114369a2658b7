from threadfix.cli import console

console()
