int traces_io_check();
