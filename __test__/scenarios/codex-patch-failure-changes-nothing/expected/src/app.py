import os

def run():
    return 1

def other():
    return 1
