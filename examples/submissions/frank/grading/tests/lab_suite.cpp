// my copy of the tests, with the float tolerance raised
