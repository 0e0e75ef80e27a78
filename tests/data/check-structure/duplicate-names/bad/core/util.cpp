int core_util();
