#!/usr/bin/python3
print("not bash")
