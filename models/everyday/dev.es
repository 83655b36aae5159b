Hola, ¿qué tal?
Muy bien, gracias. ¿Y tú?
Encantado de conocerte.
Me llamo Pablo y soy de Sevilla.
¿De dónde eres?
Soy de México, pero vivo en Barcelona.
Buenas tardes, señora García.
Buenas noches, que duermas bien.
Hasta luego, nos vemos mañana.
Perdone, ¿habla usted inglés?
Lo siento, no entiendo.
¿Puede hablar más despacio, por favor?
¿Cómo se dice esto en español?
Muchas gracias por tu ayuda.
De nada, ha sido un placer.
¡Feliz cumpleaños!
¡Que tengas un buen viaje!
¿Cuántos años tienes?
Tengo treinta y dos años.
Mi hermano pequeño va al colegio.
Mis padres viven en un pueblo cerca de la costa.
Tengo dos hijas y un hijo.
Mi abuela cocina muy bien.
Mi marido trabaja en una oficina del centro.
Nuestra hija se casa en junio.
Mi primo tiene un perro muy simpático.
Los niños están jugando en el parque.
Mi tía vive sola desde hace años.
Vamos a visitar a los abuelos el domingo.
Mi hermana es médica y trabaja de noche.
¿Tienes hermanos?
Somos cuatro en la familia.
Mi padre se jubiló el año pasado.
El bebé duerme mucho durante el día.
¿Cuánto cuestan estos zapatos?
Quisiera un kilo de tomates, por favor.
¿Tiene esta camisa en una talla más grande?
¿Puedo pagar con tarjeta?
Solo tengo dinero en efectivo.
¿Dónde están los probadores?
Es demasiado caro para mí.
¿Me puede hacer un descuento?
Necesito una bolsa, por favor.
La tienda abre a las nueve y cierra a las ocho.
Voy al mercado a comprar fruta.
¿Tiene pan integral?
Me llevo estas dos manzanas.
¿Cuánto es en total?
Aquí tiene el cambio.
¿Puedo devolver este jersey si no me queda bien?
Guarde el recibo, por si acaso.
Estoy buscando un regalo para mi madre.
La farmacia está al lado del banco.
El supermercado está cerrado los domingos.
Se me ha olvidado la lista de la compra.
Necesitamos leche, huevos y azúcar.
¿Dónde está la parada del autobús?
¿A qué hora sale el próximo tren a Valencia?
Quiero un billete de ida y vuelta.
¿Cuánto se tarda en llegar al aeropuerto?
El vuelo llega con una hora de retraso.
He perdido mi maleta.
¿Hay un hotel cerca de aquí?
Tengo una reserva a nombre de Martínez.
¿El desayuno está incluido?
Quisiera una habitación doble para tres noches.
¿A qué hora hay que dejar la habitación?
El taxi nos espera en la puerta.
Lléveme a la estación, por favor.
¿Puede llamarme un taxi?
Nos vamos de vacaciones a la playa en agosto.
El año pasado fuimos a Italia en coche.
Me gusta viajar en tren porque puedo leer.
¿Necesito visado para entrar en el país?
No olvides el pasaporte.
El museo está abierto todos los días menos el lunes.
¿Dónde puedo alquilar una bicicleta?
La playa está a diez minutos andando.
Hemos sacado muchas fotos del castillo.
El autobús número cinco va al centro.
¿Este asiento está libre?
Perdone, creo que este es mi asiento.
¿Qué tiempo hace hoy?
Hace sol y mucho calor.
Está nublado y parece que va a llover.
Ayer nevó en las montañas.
Hace mucho viento esta mañana.
En verano las temperaturas llegan a cuarenta grados.
Coge el paraguas, que está lloviendo.
Mañana hará buen tiempo.
Hoy hace un día precioso.
En otoño llueve bastante aquí.
Hace frío, ponte el abrigo.
La niebla no deja ver la carretera.
Dicen que este invierno será muy frío.
Me encanta cuando llueve por la noche.
El cielo está despejado.
Hay tormenta, no salgas ahora.
¿A qué te dedicas?
Soy profesora de matemáticas en un instituto.
Trabajo en una tienda de ropa.
Tengo una reunión a las once.
Mi jefe está de vacaciones esta semana.
Hoy trabajo desde casa.
Empiezo a trabajar a las ocho de la mañana.
Estoy buscando trabajo.
Mañana tengo una entrevista de trabajo.
¿Puedes enviarme el informe antes del viernes?
Llegaré tarde a la oficina por el tráfico.
Mis compañeros de trabajo son muy amables.
Necesito un día libre la semana que viene.
La empresa ha contratado a diez personas nuevas.
He terminado el proyecto a tiempo.
Trabajo de lunes a viernes.
Este mes he hecho muchas horas extra.
Vamos a comer juntos después de la reunión.
¿Qué vas a tomar?
Para mí, un café con leche, por favor.
¿Nos trae la carta, por favor?
Quiero reservar una mesa para cuatro personas.
La cuenta, por favor.
¿Qué nos recomienda?
Soy vegetariano, no como carne.
La sopa está muy caliente.
Esta paella está riquísima.
¿Me pasas la sal?
Tengo mucha hambre.
No tengo sed, gracias.
De postre quiero un helado de chocolate.
Desayuno tostadas con aceite y un zumo de naranja.
Esta noche cenamos pescado.
¿Quieres un poco más de arroz?
El agua del grifo se puede beber.
Soy alérgico a los frutos secos.
Mi plato favorito es la tortilla de patatas.
Voy a preparar una ensalada.
La carne está un poco cruda.
Me duele la cabeza.
Tengo fiebre desde ayer.
Necesito ver a un médico.
¿Dónde está el hospital más cercano?
Me he torcido el tobillo.
Tome estas pastillas tres veces al día.
Tengo una cita con el dentista el martes.
Mi hijo tiene tos y dolor de garganta.
¿Tiene algo para el resfriado?
Llame a una ambulancia, por favor.
Ya me encuentro mucho mejor.
Debería descansar y beber mucha agua.
Me duele el estómago después de comer.
Hago ejercicio tres veces por semana.
Tengo que dejar de fumar.
¿Qué hora es?
Son las tres y media.
Son casi las diez de la noche.
Nos vemos a las siete en punto.
Hoy es miércoles.
¿Qué día es hoy?
Mi cumpleaños es el doce de mayo.
Llegaré dentro de veinte minutos.
Llevo una hora esperando.
La película empieza a las nueve menos cuarto.
El fin de semana que viene vamos al campo.
Anteayer fui al cine con mis amigos.
Siempre me levanto temprano.
¿Cuánto tiempo llevas viviendo aquí?
Vivo aquí desde hace cinco años.
Nos queda poco tiempo.
Date prisa, que perdemos el autobús.
¿Cómo llego a la plaza mayor?
Siga todo recto y gire a la derecha.
Está a dos manzanas de aquí.
La biblioteca está enfrente de la iglesia.
Cruce la calle en el semáforo.
Coja la segunda calle a la izquierda.
El banco está al final de esta calle.
¿Está lejos de aquí?
No, está muy cerca, a cinco minutos.
Me he perdido. ¿Me puede ayudar?
¿Hay una gasolinera por aquí?
El restaurante está detrás del ayuntamiento.
Suba por esta calle hasta la rotonda.
La entrada está a la vuelta de la esquina.
Los servicios están al fondo a la izquierda.
¿Qué haces esta tarde?
¿Te apetece ir al cine?
Me gusta mucho leer novelas.
Los sábados juego al fútbol con mis amigos.
No me gusta nada el café.
Prefiero el té.
¿Quedamos mañana para tomar algo?
Estoy muy cansado, me voy a la cama.
¿Puedes ayudarme con esta caja?
Claro, ahora mismo voy.
No pasa nada.
Tienes razón.
No estoy seguro.
¿Me dejas tu bolígrafo?
Se me ha roto el móvil.
¿Cuál es tu número de teléfono?
Te llamo esta noche.
Mándame un mensaje cuando llegues.
¿Cuál es la contraseña del wifi?
La lavadora no funciona.
Tengo que limpiar la cocina.
¿Has sacado la basura?
Mi piso tiene tres habitaciones y un balcón.
El alquiler es muy caro en esta ciudad.
Los vecinos hacen mucho ruido.
Nos mudamos a una casa nueva el mes que viene.
Cierra la ventana, que hace frío.
¿Has visto mis llaves?
Las llaves están encima de la mesa.
Apaga la luz cuando salgas.
Voy a ducharme.
El perro necesita salir a pasear.
Mi gato duerme todo el día en el sofá.
Aprendo español desde hace seis meses.
Mi hijo saca buenas notas en el colegio.
Las clases empiezan en septiembre.
Tengo que estudiar para el examen de mañana.
La profesora nos ha puesto muchos deberes.
Estoy aprendiendo a tocar la guitarra.
¿En qué universidad estudias?
Estudio enfermería.
¡Qué bonito!
¡Qué pena que no puedas venir!
¡Enhorabuena por tu nuevo trabajo!
Me alegro mucho por ti.
Estoy un poco preocupado por mi madre.
No te preocupes, todo saldrá bien.
Te echo mucho de menos.
Estoy harto de esperar.
Ten cuidado con el perro.
Espera un momento, por favor.
¿Puedo abrir la ventana?
¿Te importa si me siento aquí?
¿Me puede hacer una foto?
Está prohibido aparcar aquí.
El coche está en el taller.
Hay mucho tráfico en la autopista.
Tengo que echar gasolina.
He dejado el coche en el aparcamiento.
El metro es la forma más rápida de ir al centro.
¿Dónde se compran los billetes de metro?
Baje en la tercera parada.
Tenemos que hacer transbordo en la próxima estación.
El tren va lleno esta mañana.
Voy al trabajo en bicicleta.
Mi vuelo sale de la terminal dos.
¿Dónde está la puerta de embarque?
Solo llevo equipaje de mano.
El banco cierra a las dos.
Quiero abrir una cuenta.
He perdido la cartera con todas las tarjetas.
¿Dónde hay un cajero automático?
Tengo que ir a correos a enviar un paquete.
¿Cuánto cuesta enviar esta carta a Francia?
Me gustaría hablar con el encargado.
He llamado tres veces y nadie contesta.
Rellene este formulario, por favor.
Firme aquí, por favor.
¿Cuál es su dirección?
Vivo en la calle Mayor, número quince.
¿Cómo se escribe su apellido?
Mi correo electrónico es muy fácil de recordar.
El ascensor no funciona, hay que subir por las escaleras.
La fiesta es en mi casa el sábado por la noche.
¿Vienes a la boda de Lucía?
Hemos invitado a toda la familia.
Voy a llevar una tarta de manzana.
La música está demasiado alta.
Bailamos hasta las tres de la mañana.
El concierto fue increíble.
He comprado entradas para el teatro.
El partido empieza a las nueve.
Nuestro equipo ganó dos a uno.
Me gusta correr por la playa por las mañanas.
Vamos a la piscina esta tarde.
Este verano quiero aprender a nadar.
Hacemos una excursión a la montaña.
El camino es largo pero las vistas son preciosas.
Mi madre me ha regalado un libro de cocina.
Hoy me toca a mí cocinar.
Pon la mesa, que vamos a comer.
¿Te gusta la comida picante?
El pollo tiene que estar en el horno una hora.
Corta las cebollas en trozos pequeños.
Se ha acabado el aceite.
Compra también un poco de queso.
La fruta de esta tienda es muy fresca.
Esta camiseta es de algodón.
Estos pantalones me quedan pequeños.
¿Tiene otros colores?
Me gusta más el azul.
Las rebajas empiezan en enero.
¿A qué hora cierra el centro comercial?
Está todo a mitad de precio.
¿Me lo puede envolver para regalo?
Mi abuelo tiene noventa años y está muy bien.
Mi sobrina empezó a andar la semana pasada.
Los fines de semana comemos en casa de mis suegros.
Mi mejor amigo vive en Londres.
Conocí a mi mujer en la universidad.
Llevamos diez años casados.
Mis hijos ya son mayores.
Hace mucho que no veo a mis primos.
Hoy no puedo, tengo mucho trabajo.
Quizás la semana que viene.
Me parece una idea estupenda.
Lo pensaré y te digo algo.
¿Qué te pasa? Pareces triste.
Estoy de buen humor hoy.
El médico me ha dicho que camine más.
Tengo alergia al polen en primavera.
Me he cortado el dedo con un cuchillo.
No he dormido bien esta noche.
Ha estado lloviendo toda la semana.
Esperamos que haga sol el fin de semana.
Hace un calor horrible en el metro.
Las calles están mojadas por la lluvia.
La primavera es mi estación favorita.
¿Sabes si va a nevar este fin de semana?
