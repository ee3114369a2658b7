from threadfix.cli import main

main()
