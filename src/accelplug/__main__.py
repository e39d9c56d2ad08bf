from accelplug.cli import main

main()
