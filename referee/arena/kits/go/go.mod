module starter/bot

go 1.18
