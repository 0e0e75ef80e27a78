int core_io_check();
