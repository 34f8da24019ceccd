module github.com/vexl-dev/vexl

go 1.22
