import CourierCLI

CourierCommandLine.main()
