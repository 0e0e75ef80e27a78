int traces_util();
